/**
 * The floor's activities: no work at all, a small object back. They stand in for `callModel` and
 * `runTool`, so the floor workflow pays Temporal's per-activity cost and nothing else.
 */
export function createFloorActivities() {
  return {
    floorModelCall: async (iteration: number) => ({ iteration, kind: 'model', ok: true }),
    floorTool: async (iteration: number) => ({ iteration, kind: 'tool', ok: true }),
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
