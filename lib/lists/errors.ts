// The list language's catalog: the 400 of every list of the service (and of include / exclude on
// a single document). The parser assembles the reason, naming the parameter and what it accepts.
import { defineError } from '../http/errors.js'

export const InvalidListParameter = defineError<[reason: string]>('INVALID_LIST_PARAMETER', '%s', 400)
