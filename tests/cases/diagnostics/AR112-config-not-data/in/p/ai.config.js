module.exports = {
  rules: { x: { content: "x", description: () => "dynamic" } },
};
