while (true) {}
export default {};
