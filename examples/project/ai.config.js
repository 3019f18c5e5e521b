// The project's AI configuration: presets first, then .ai/, then this file (spec 000 §4).
module.exports = {
  presets: ["./presets/team"],
  context: {
    global: "## Release rules\n\nReleases are cut from `main` on Tuesdays.",
  },
  rules: {
    "api-style": { globs: ["src/api/**/*.kt", "src/routes/**/*.kt"] },
  },
  mcp: {
    servers: {
      tickets: { command: "node", args: ["tools/tickets-mcp.js"], env: { TICKETS_URL: "${TICKETS_URL}" } },
    },
  },
};
