/**
 * `logbook serve`: the local web app over a sessions root (docs/serve.md) — its request handler
 * with the token and `Host` guard, the pages, the shipped assets and the Node server.
 */
export * from "./Revalidating.ts"
export * from "./SearchPage.ts"
export * from "./ServeApp.ts"
export * from "./ServeAssets.ts"
export * from "./ServeHtml.ts"
export * from "./ServeServer.ts"
export * from "./ServeToken.ts"
export * from "./SessionPage.ts"
export * from "./SessionsPage.ts"
export * from "./UsagePage.ts"
