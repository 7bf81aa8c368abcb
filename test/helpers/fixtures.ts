/** A valid tool document; `overrides` replace top-level fields (undefined removes one). */
export function toolDocument(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    name: 'issue_refund',
    version: '1.0.0',
    description: 'Refund a paid invoice in full or in part. Use the invoice id from the billing system.',
    summary: 'Refund a paid invoice.',
    not_for: 'Not for cancelling unpaid orders; use cancel_order.',
    aliases: ['give money back', 'refund my purchase'],
    examples: ['Refund invoice #1024, the item was broken'],
    tags: ['billing', 'payments'],
    category: 'billing',
    required_scopes: [],
    sensitivity: 'medium',
    side_effects: true,
    parameters: {
      type: 'object',
      properties: {
        invoice_id: { type: 'string', description: 'The invoice to refund.' },
        amount: { type: 'number', minimum: 0, description: 'Amount to refund; the full amount when absent.' },
      },
      required: ['invoice_id'],
      additionalProperties: false,
    },
    returns: { type: 'object', properties: { refund_id: { type: 'string' } } },
  };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete doc[key];
    else doc[key] = value;
  }
  return doc;
}
