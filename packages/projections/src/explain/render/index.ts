/**
 * Renderers of an explanation model: terminal text, details, diagram and the HTML report.
 */
export * from "./ExplanationHtml.ts"
export * from "./ExplanationText.ts"
