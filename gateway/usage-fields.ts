// Token usage as the OpenAI-style APIs report it: chat and text completions and embeddings say
// prompt_tokens / completion_tokens, the Responses API input_tokens / output_tokens (streamed inside
// its response.completed event); reasoning models add the tokens spent thinking in their details. Pure.

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** What the upstream says the call cost (OpenRouter's `usage.cost`), when it says. */
  cost?: number;
  /** Of the completion tokens, those spent thinking, when the upstream says (`completion_tokens_details.reasoning_tokens`). */
  reasoningTokens?: number;
}

/** The usage one answer (a JSON body, or one streamed event's data) reports; undefined when none. */
export function usageOf(answer: unknown): TokenUsage | undefined {
  if (!isObject(answer)) return undefined;
  const usage = isObject(answer.usage) ? answer.usage : isObject(answer.response) && isObject(answer.response.usage) ? answer.response.usage : undefined;
  if (!usage) return undefined;
  const details = isObject(usage.completion_tokens_details)
    ? usage.completion_tokens_details
    : isObject(usage.output_tokens_details)
      ? usage.output_tokens_details
      : {};
  const reasoningTokens = count(details.reasoning_tokens);
  return {
    promptTokens: count(usage.prompt_tokens) ?? count(usage.input_tokens) ?? 0,
    completionTokens: count(usage.completion_tokens) ?? count(usage.output_tokens) ?? 0,
    ...(typeof usage.cost === 'number' && Number.isFinite(usage.cost) ? { cost: usage.cost } : {}),
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
  };
}

/** Whether a streamed event carries generated output: the moment that marks time to first token. */
export function carriesOutput(event: unknown): boolean {
  if (!isObject(event)) return false;
  // Responses API: response.output_text.delta, response.reasoning_text.delta, ...function_call_arguments.delta
  if (typeof event.type === 'string') return event.type.endsWith('.delta') && typeof event.delta === 'string' && event.delta.length > 0;
  if (!Array.isArray(event.choices)) return false;
  return event.choices.some((choice: unknown) => {
    if (!isObject(choice)) return false;
    if (typeof choice.text === 'string' && choice.text) return true;
    const delta = choice.delta;
    return (
      isObject(delta) && Boolean(delta.content || delta.reasoning_content || delta.reasoning || (Array.isArray(delta.tool_calls) && delta.tool_calls.length))
    );
  });
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
