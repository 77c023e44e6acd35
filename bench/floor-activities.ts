/**
 * The floor's activities: no work at all, a small object back. They stand in for `callModel` and
 * `runTool`, so the floor workflow pays Temporal's per-activity cost and nothing else.
 */
export function createFloorActivities() {
  return {
    floorModelCall: async (iteration: number) => ({ iteration, kind: 'model', ok: true }),
    floorTool: async (iteration: number) => ({ iteration, kind: 'tool', ok: true }),
    /** The saturation floor's model call: it only waits out the model latency. */
    floorModelWait: async (latencyMs: number): Promise<Span> => {
      const startedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, latencyMs));
      return { startedAt, endedAt: Date.now() };
    },
    /** The saturation floor's tool call: nothing, with its times. */
    floorToolSpan: async (): Promise<Span> => {
      const startedAt = Date.now();
      return { startedAt, endedAt: Date.now() };
    },
  };
}

/** When an activity of the saturation floor began and ended, by the worker's clock. */
export interface Span {
  startedAt: number;
  endedAt: number;
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
