import { DefaultLogger, Runtime } from '@temporalio/worker';

// Worker state changes at INFO drown test output; warnings and errors still show, except the one
// every model-queue worker gives at start (it runs activities only, by design: `createWorker`).
const warnings = new DefaultLogger('WARN');
Runtime.install({
  logger: new DefaultLogger('WARN', (entry) => {
    if (entry.message.startsWith('No workflows registered')) return;
    warnings.log(entry.level, entry.message, entry.meta);
  }),
});
