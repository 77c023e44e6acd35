// The parser's own module (see src/shared/tools/cron.ts for why it is imported alone), typed as
// the package's index types it.
declare module 'cron-parser/dist/CronExpressionParser' {
  export { CronExpressionParser } from 'cron-parser';
}
