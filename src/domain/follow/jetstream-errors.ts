// The JetStream API errors the domain acts on, by the server's `err_code`. nats.js 2.29 names none
// of them (only its successor, @nats-io/jetstream, exports JetStreamApiCodes): the numbers are the
// server's own (nats-server jetstream_errors_generated.go) and stable across its versions.

/** JSStreamNotFoundErr: the bucket's stream does not exist (deleted, not created yet, or a cluster still electing its leader). */
const STREAM_NOT_FOUND = 10059
/** JSStreamWrongLastSequenceErr: a compare-and-set (create, update, delete with a revision) lost to another write. */
const STREAM_WRONG_LAST_SEQUENCE = 10071

function apiCode (err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code
}

export function isStreamNotFound (err: unknown): boolean {
  return apiCode(err) === STREAM_NOT_FOUND
}

export function isWrongLastSequence (err: unknown): boolean {
  return apiCode(err) === STREAM_WRONG_LAST_SEQUENCE
}
