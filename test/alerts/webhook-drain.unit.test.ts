import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.js';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.js';
import type { WebhookMessage, WebhookRepository } from '../../src/webhooks/webhook.repository.js';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const message: WebhookMessage = {
  id: 'msg_1',
  endpointId: 1,
  accountId: null,
  eventType: 'test',
  payload: '{}',
  status: 'pending',
  attempts: 1,
  nextAttemptAt: '2026-01-01T00:00:00.000Z',
  createdAt: '2026-01-01T00:00:00.000Z',
};

describe('WebhookDispatcher.drain', () => {
  it('waits for a background round that is still claiming the message the caller queued', async () => {
    // The background round's claim takes the only message and answers late; drain's own claim finds
    // nothing. drain must still return only once that message's attempt is recorded.
    const backgroundClaimStarted = deferred<true>();
    const releaseBackgroundClaim = deferred<true>();
    const settled: string[] = [];
    let claims = 0;
    const repository = {
      async claimDue(): Promise<WebhookMessage[]> {
        claims += 1;
        if (claims > 1) return [];
        backgroundClaimStarted.resolve(true);
        await releaseBackgroundClaim.promise;
        return [message];
      },
      endpoint: () => Promise.resolve(undefined),
      settle: (_tx: unknown, settledMessage: WebhookMessage) => {
        settled.push(settledMessage.id);
        return Promise.resolve(true);
      },
    } as unknown as WebhookRepository;
    const storage = { transaction: <T>(work: (tx: unknown) => Promise<T>) => work(undefined) };
    const dispatcher = new WebhookDispatcher(repository, storage as never, systemClock, {
      retryScheduleMs: [],
      timeoutMs: 1000,
      pollMs: 60_000,
      allowPrivateUrls: true,
    });
    dispatcher.start();
    await backgroundClaimStarted.promise;
    const drained = dispatcher.drain().then(() => [...settled]);
    // Released after every microtask drain's own claim needs: a claimer slower than drain's.
    setImmediate(() => {
      releaseBackgroundClaim.resolve(true);
    });
    expect(await drained).toEqual(['msg_1']);
    await dispatcher.close();
  });
});
