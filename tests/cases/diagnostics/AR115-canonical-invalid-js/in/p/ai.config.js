// The canonical config as JavaScript: Node evaluates it, and the error points at the key
// found in the source ("alwaysApply" of rules.style, not the one of rules.tabs).
module.exports = {
  rules: {
    tabs: { content: "Indent with tabs.", alwaysApply: true },
    style: {
      content: "Use tabs.",
      alwaysApply: "yes",
    },
  },
};
