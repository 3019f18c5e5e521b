export const Notify = async () => ({
  event: async ({ event }) => {
    if (event.type === "session.idle") console.log("done")
  },
})
