import { ServiceError } from '@temporalio/client';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { whyNoAnswer } from '../src/client/prune-jobs';

// What a query's failure looks like from the client: a ServiceError over the call's gRPC error.
function grpcError(code: number, message: string): ServiceError {
  const cause = Object.assign(new Error(`${code} ${message}`), { code, details: message, metadata: {} });
  return new ServiceError('Failed to query Workflow', { cause });
}
const job = { workflowId: 'job-1', taskQueue: 'queue-1' } as WorkflowExecutionInfo;
const noWorker = 'did not answer within 1 s: no worker seems to poll its task queue queue-1';

describe('why an open job gave prune no answer', () => {
  it('a passed deadline is named as such, whether gRPC says DEADLINE_EXCEEDED or CANCELLED', () => {
    expect(
      whyNoAnswer(job, grpcError(4, 'DEADLINE_EXCEEDED: Deadline exceeded'), { timeoutMs: 1000, timedOut: true }),
    ).toContain(noWorker);
    expect(whyNoAnswer(job, grpcError(1, 'CANCELLED: Call cancelled'), { timeoutMs: 1000, timedOut: true })).toContain(
      noWorker,
    );
  });

  it("the server's own 'no poller' answer is named the same way", () => {
    const error = grpcError(9, 'FAILED_PRECONDITION: no poller seen for task queue recently, worker may be down');
    expect(whyNoAnswer(job, error, { timeoutMs: 1000, timedOut: false })).toContain(noWorker);
  });

  it('a cancel before the deadline, or any other failure, gives the server message under the client one', () => {
    expect(whyNoAnswer(job, grpcError(1, 'CANCELLED: Call cancelled'), { timeoutMs: 1000, timedOut: false })).toBe(
      'job job-1 could not be asked what it needs: Failed to query Workflow: 1 CANCELLED: Call cancelled',
    );
    expect(whyNoAnswer(job, grpcError(14, 'UNAVAILABLE: connection reset'), { timeoutMs: 1000, timedOut: false })).toBe(
      'job job-1 could not be asked what it needs: Failed to query Workflow: 14 UNAVAILABLE: connection reset',
    );
  });
});
