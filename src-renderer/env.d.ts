// Stylesheets are imported for their side effect; Vite emits them as separate .css files (linked,
// never inlined, so the strict CSP's style-src 'self' holds).
declare module '*.css' {}
