import { describe, expect, it } from 'vitest';

import { prepareQuery } from '../../src/discovery/query.js';

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
});
