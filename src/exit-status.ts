// The one mapping of start error codes to the process's exit status (main exits with it): 2 when
// the settings must change, 1 when what the service met refused it.

import type { StartErrorCode } from './start-error.js'

export const EXIT_STATUS: Readonly<Record<StartErrorCode, 1 | 2>> = {
  SETTING_INVALID: 2,
  TOKENS_FILE_INVALID: 2,
  TLS_FILES_INVALID: 2,
  DOMAIN_TABLE_INVALID: 2,
  NATS_SIGN_IN_REFUSED: 1,
  NATS_TLS_FAILED: 1,
  HTTP_LISTEN_FAILED: 1
}
