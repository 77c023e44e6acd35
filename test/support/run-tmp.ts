/** The environment variable naming the test run's temp folder (global-setup.ts, global-teardown.ts). */
export const RUN_TMP_VAR = 'DURABLE_AGENT_TEST_RUN_TMP';
