// What a demo page does when its Worker cannot start (its script not reachable: offline before
// the page ever ran it) or throws: without it the page said 'Measuring in a Worker…' for ever.
import { showError } from './site/shell';

/**
 * On `worker`'s error event: `stop(status)` (the page's own: its status line, Run usable again,
 * focus back on it) and the page's error, the event's message or else `fallback`.
 */
export function stopOnWorkerError(worker: Worker, stop: (status: string) => void, status: string, fallback: string): void {
  worker.onerror = (e) => {
    stop(status);
    showError(e.message || fallback);
  };
}
