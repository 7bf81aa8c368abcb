import { describe, expect, it } from 'vitest';

import { boundedPart, MAX_STEPS, prepareQuery, requestSteps, SEARCHED_QUERY_CHARS, withoutQuotedValues } from '../../src/discovery/query.js';

describe('prepareQuery', () => {
  it('normalizes whitespace and Unicode', () => {
    expect(prepareQuery('  cafe\u0301   menu \n please ').text).toBe('café menu please');
  });

  it('splits identifiers for the lexical leg and keeps the original token', () => {
    expect(prepareQuery('call getWeatherForecast now').lexicalText).toBe('call getWeatherForecast get weather forecast now');
  });

  it('treats only identifier-shaped tokens as possible tool names', () => {
    expect(prepareQuery('use search_orders or the calculator, or billing.refund.').nameTokens).toEqual(['search_orders', 'billing.refund']);
    expect(prepareQuery('run getWeather').nameTokens).toEqual(['getweather']);
  });

  it('takes a tool name only as a whole word, not as a piece of a longer value', () => {
    expect(prepareQuery('check hash "sha256:9f2c1e" of run-42').nameTokens).toEqual(['run-42']);
    expect(prepareQuery('open https://example.com/api/search_orders please').nameTokens).toEqual([]);
    expect(prepareQuery("call get_weather(city='Paris'), then `s3.put` and (list_tags).").nameTokens).toEqual(['get_weather', 's3.put', 'list_tags']);
    expect(prepareQuery('tools: search_orders,get_weather;list_tags').nameTokens).toEqual(['search_orders', 'get_weather', 'list_tags']);
  });

  it('takes a name out of the punctuation and emphasis around it, and out of CJK text', () => {
    expect(prepareQuery("use **search_orders**, then get_weather's output").nameTokens).toEqual(['search_orders', 'get_weather']);
    expect(prepareQuery('«search_orders» or „get_weather“ or list_tags… or s3.put|billing.refund').nameTokens).toEqual(['search_orders', 'get_weather', 'list_tags', 's3.put', 'billing.refund']);
    expect(prepareQuery('请用search_orders查询订单，然后get_weather。').nameTokens).toEqual(['search_orders', 'get_weather']);
  });

  it('does not take a long run of characters for a name, however it is trimmed', () => {
    expect(prepareQuery(`run ${'a_'.repeat(60)}b and ${'"'.repeat(500)}x`).nameTokens).toEqual([]);
  });

  it('searches a short request whole and says so', () => {
    expect(prepareQuery('refund invoice 1024').searched).toEqual({ bounded: false, part: 'whole', chars: 19, total_chars: 19 });
  });
});

describe('withoutQuotedValues: what the tool must do, not the arguments it will get', () => {
  it('leaves out double, typographic, back and single quoted spans', () => {
    expect(withoutQuotedValues('create a note titled "Meeting minutes" in the \'Work\' folder')).toBe('create a note titled in the folder');
    expect(withoutQuotedValues('search for “quarterly report” and `main.py`')).toBe('search for and');
  });

  it('keeps apostrophes: a single quote between letters opens no span', () => {
    expect(withoutQuotedValues("Where is John's order? Bob's 'Q3 report' is late")).toBe("Where is John's order? Bob's is late");
    expect(withoutQuotedValues("don't cancel the users' orders")).toBe("don't cancel the users' orders");
  });

  it('keeps a request that is nothing but quotes', () => {
    expect(withoutQuotedValues('"refund invoice 1024"')).toBe('"refund invoice 1024"');
  });

  it('gives both legs the intent: prepareQuery embeds it and keeps names from the whole request', () => {
    const prepared = prepareQuery('use the "search_orders" tool to find "late deliveries"');
    expect(prepared.intentText).toBe('use the tool to find');
    expect(prepared.nameTokens).toContain('search_orders');
    expect(prepared.lexicalText).toContain('late deliveries');
  });
});

describe('boundedPart: what of a long request or a conversation is searched', () => {
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

  it('searches the last user turn of a pasted conversation', () => {
    const conversation = [
      `User: ${filler(150)}`,
      `Assistant: ${filler(150)}`,
      'User: please refund invoice 1024, the item arrived broken',
      'Assistant: let me check that for you',
    ].join('\n');
    expect(boundedPart(conversation)).toEqual({ text: 'please refund invoice 1024, the item arrived broken', part: 'last_user_turn' });
  });

  it('recognizes other speaker labels (Human, [customer], Me >)', () => {
    const conversation = `Human: ${filler(200)}\nAI: sure\n[customer]: cancel my subscription today\n`;
    expect(boundedPart(conversation).text).toBe('cancel my subscription today');
    expect(boundedPart(`Me > ${filler(200)}\nBot > ok\nMe > where is my parcel`).text).toBe('where is my parcel');
  });

  it('searches a short pasted conversation by its last user turn too', () => {
    const conversation = 'User: what is the weather in Oslo\nAssistant: Rain, 8 degrees.\nUser: convert 20 euros to dollars';
    expect(boundedPart(conversation)).toEqual({ text: 'convert 20 euros to dollars', part: 'last_user_turn' });
    expect(prepareQuery(conversation).searched).toMatchObject({ bounded: true, part: 'last_user_turn', chars: 27 });
  });

  it('keeps a short request that only opens with a speaker label whole', () => {
    const request = 'User: alice@example.com\nSystem: Linux\nreset her password';
    expect(boundedPart(request)).toEqual({ text: 'User: alice@example.com System: Linux reset her password', part: 'whole' });
  });

  it('keeps the head and the tail of other long text, within the bound, cut at spaces', () => {
    const text = `Summarize this report: ${filler(400)} and tell me what failed`;
    const { text: part, part: kind } = boundedPart(text);
    expect(kind).toBe('head_and_tail');
    expect(part.length).toBeLessThanOrEqual(SEARCHED_QUERY_CHARS);
    expect(part.startsWith('Summarize this report: word0')).toBe(true);
    expect(part.endsWith('and tell me what failed')).toBe(true);
    expect(part.split(' ').every((w) => /^(word\d+|Summarize|this|report:|and|tell|me|what|failed)$/.test(w))).toBe(true);
  });

  it('bounds an over-long last user turn too', () => {
    const part = boundedPart(`User: hi\nAssistant: hello\nUser: ${filler(400)}`);
    expect(part.part).toBe('last_user_turn');
    expect(part.text.length).toBeLessThanOrEqual(SEARCHED_QUERY_CHARS);
  });

  it('reports the bounded part in the prepared query', () => {
    const searched = prepareQuery(`please ${filler(1000)}`).searched;
    expect(searched.bounded).toBe(true);
    expect(searched.chars).toBeLessThanOrEqual(SEARCHED_QUERY_CHARS);
    expect(searched.total_chars).toBeGreaterThan(5000);
  });
});

describe('requestSteps', () => {
  it('splits a request at sequencing words', () => {
    expect(requestSteps('Create a note titled "Plan", then list all my tags and finally check the app setup.')).toEqual([
      'Create a note titled "Plan"',
      'list all my tags',
      'check the app setup.',
    ]);
    expect(requestSteps('First, get my balance. Then, send 2 ETH to Bob after that archive the receipt')).toEqual(['First, get my balance', 'send 2 ETH to Bob', 'archive the receipt']);
  });

  it('keeps a request of one step whole: a bare "and", a sentence end, a decimal point', () => {
    expect(requestSteps('search and replace text in my files')).toEqual([]);
    expect(requestSteps("I'm hungry. Can you recommend any good restaurants nearby?")).toEqual([]);
    expect(requestSteps('Pay 0.05 ETH to 0xabc')).toEqual([]);
  });

  it('joins a step too short to stand alone to the one before', () => {
    expect(requestSteps('Create a new issue in the tracker, then do it')).toEqual([]);
    expect(requestSteps('Create a new issue in the tracker, then assign it to Ana, then close it')).toEqual(['Create a new issue in the tracker', 'assign it to Ana close it']);
  });

  it('searches at most MAX_STEPS steps apart', () => {
    const many = Array.from({ length: MAX_STEPS + 1 }, (_, i) => `open the report number ${i}`).join(', then ');
    expect(requestSteps(many)).toEqual([]);
  });

  it('prepares each step for both legs', () => {
    const steps = prepareQuery('Create a note named "Q3", then list_tags for the vault').steps;
    expect(steps.map((s) => s.text)).toEqual(['Create a note named "Q3"', 'list_tags for the vault']);
    expect(steps[0]!.intentText).toBe('Create a note named');
    expect(steps[1]!.nameTokens).toEqual(['list_tags']);
    expect(steps.every((s) => s.steps.length === 0)).toBe(true);
  });
});
