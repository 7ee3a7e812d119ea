// What a stop signal (SIGTERM, SIGINT) asks, given when the stop began. `npm start` passes on to
// the service the signal it gets, and a terminal's Ctrl-C (to its process group) or systemd (to
// every process of the unit) gives the service that signal too: one request arrives twice, moments
// apart. A signal after that moment asks to stop at once (docs/running.md, "Signals").

/** How long after the signal that began the stop another is that request again. */
export const REPEAT_MS = 1000

/** `stop`: begin the graceful stop; `repeat`: the same request again; `now`: stop at once. */
export type StopSignalMeaning = 'stop' | 'repeat' | 'now'

/** `stoppingSince` and `now` in ms of a monotonic clock (`performance.now()`), which no clock step moves. */
export function stopSignalMeaning (stoppingSince: number | undefined, now: number): StopSignalMeaning {
  if (stoppingSince === undefined) return 'stop'
  return now - stoppingSince < REPEAT_MS ? 'repeat' : 'now'
}
