// Host-pinned task queues (docs/architecture.md): every evaluation machine polls the shared queue and a
// queue of its own, named from a stable host id so a restarted worker picks its own work back up.

export interface ClaimedHost {
  hostId: string;
  taskQueue: string;
}

export const DEFAULT_SHARED_QUEUE = 'benchrouter';

export function hostQueueName(sharedQueue: string, hostId: string): string {
  return `${sharedQueue}@${hostId}`;
}

/** The host whose queue `queue` is (hostQueueName's inverse); undefined for the shared queue and any other. */
export function hostOfQueue(sharedQueue: string, queue: string): string | undefined {
  const prefix = hostQueueName(sharedQueue, '');
  return queue.startsWith(prefix) && queue.length > prefix.length ? queue.slice(prefix.length) : undefined;
}
