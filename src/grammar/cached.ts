/** Memoised entry points of the grammars, for callers that parse the same strings repeatedly. */
import { memoize } from "./memo.js";
import { parseDuration } from "./duration.js";
import { parseEndpoints } from "./endpoint.js";
import { parseRate } from "./rate.js";
import { parseSignatureRecipe } from "./signature-recipe.js";
import { parseTrigger } from "./trigger.js";
import { parseExpression } from "./expression/index.js";

export const parseDurationCached = memoize(parseDuration);
export const parseEndpointsCached = memoize(parseEndpoints);
export const parseRateCached = memoize(parseRate);
export const parseSignatureRecipeCached = memoize(parseSignatureRecipe);
export const parseTriggerCached = memoize(parseTrigger);
export const parseExpressionCached = memoize(parseExpression);
