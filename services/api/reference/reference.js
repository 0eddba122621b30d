// Renders the OpenAPI document this server publishes. A file, not an inline script, so the
// reference keeps the console's Content-Security-Policy (script-src 'self').
window.ui = SwaggerUIBundle({
  url: "/api/openapi.json",
  dom_id: "#reference",
  deepLinking: true,
});
