import { toolDocument } from '../helpers/fixtures.js';

/** [name, summary, category, scopes, tags] of a small realistic catalog (more than one UI page). */
const ROWS: [string, string, string, string[], string[]][] = [
  ['issue_refund', 'Refund a paid invoice in full or in part.', 'billing', ['billing:write'], ['payments', 'refunds']],
  ['get_invoice', 'Fetch an invoice with its lines, taxes and payment status.', 'billing', ['billing:read'], ['invoices']],
  ['list_invoices', 'List a customer\'s invoices, newest first, filtered by status.', 'billing', ['billing:read'], ['invoices']],
  ['void_invoice', 'Void an unpaid invoice so it can no longer be paid.', 'billing', ['billing:admin'], ['invoices']],
  ['update_payment_method', 'Replace the card or bank account a subscription is charged to.', 'billing', ['billing:write'], ['payments']],
  ['apply_discount', 'Apply a coupon or percentage discount to a subscription.', 'billing', ['billing:write'], ['subscriptions']],
  ['cancel_subscription', 'Cancel a subscription now or at the end of its billing period.', 'billing', ['billing:write'], ['subscriptions']],
  ['create_ticket', 'Open a support ticket for a customer with a subject and priority.', 'support', ['support:write'], ['tickets']],
  ['search_tickets', 'Search support tickets by customer, status or text.', 'support', ['support:read'], ['tickets']],
  ['escalate_ticket', 'Escalate a ticket to the on-call tier-2 team.', 'support', ['support:write'], ['tickets', 'escalation']],
  ['add_ticket_comment', 'Add a public reply or an internal note to a ticket.', 'support', ['support:write'], ['tickets']],
  ['close_ticket', 'Close a resolved ticket and send the satisfaction survey.', 'support', ['support:write'], ['tickets']],
  ['lookup_order', 'Look up an order by number: items, shipping address and status.', 'support', ['support:read'], ['orders']],
  ['track_shipment', 'Track a parcel and report its location and delivery estimate.', 'support', [], ['shipping']],
  ['restart_service', 'Restart a service deployment in one environment.', 'devops', ['devops:operate'], ['deployments']],
  ['terminate_batch_process', 'Stop a stuck or runaway batch job by its id.', 'devops', ['devops:operate'], ['jobs']],
  ['scale_deployment', 'Change the replica count of a deployment.', 'devops', ['devops:operate'], ['deployments']],
  ['get_service_logs', 'Fetch recent log lines of a service, filtered by level.', 'devops', ['devops:read'], ['logs']],
  ['create_incident', 'Declare an incident, page the on-call engineer and open a channel.', 'devops', ['devops:operate'], ['incidents']],
  ['rollback_release', 'Roll a service back to its previous release.', 'devops', ['devops:admin'], ['deployments']],
  ['query_metrics', 'Query a time series metric such as latency or error rate.', 'devops', ['devops:read'], ['metrics']],
  ['create_contact', 'Create a CRM contact with name, email and company.', 'crm', ['crm:write'], ['contacts']],
  ['find_contact', 'Find CRM contacts by name, email or company.', 'crm', ['crm:read'], ['contacts']],
  ['update_deal_stage', 'Move a sales deal to another pipeline stage.', 'crm', ['crm:write'], ['deals']],
  ['log_call', 'Log a sales call with notes against a contact.', 'crm', ['crm:write'], ['activities']],
  ['schedule_meeting', 'Schedule a meeting with a contact and send the invite.', 'crm', ['crm:write'], ['activities', 'calendar']],
  ['export_pipeline_report', 'Export the sales pipeline as a CSV report.', 'crm', ['crm:read'], ['reports']],
  ['merge_contacts', 'Merge duplicate CRM contacts into one record.', 'crm', ['crm:admin'], ['contacts']],
];

/** Tool documents of the catalog, each with a one-parameter schema and a not_for hint on some. */
export function uiCatalog(): Record<string, unknown>[] {
  return ROWS.map(([name, summary, category, scopes, tags], i) =>
    toolDocument({
      name,
      summary,
      description: `${summary} Returns the affected record.`,
      category,
      tags,
      required_scopes: scopes,
      sensitivity: scopes.some((s) => s.endsWith(':admin')) ? 'high' : i % 3 === 0 ? 'low' : 'medium',
      side_effects: !/^(get|list|search|lookup|find|query|track|export)_/.test(name),
      aliases: [],
      examples: [],
      not_for: name === 'issue_refund' ? 'Not for cancelling unpaid orders; use void_invoice.' : undefined,
      parameters: {
        type: 'object',
        properties: { id: { type: 'string', description: `The ${category} record to act on.` }, reason: { type: 'string', description: 'Why, for the audit log.' } },
        required: ['id'],
        additionalProperties: false,
      },
      returns: undefined,
    }),
  );
}

/** Every scope the catalog uses except the admin ones. */
export const READER_SCOPES = ['billing:read', 'billing:write', 'support:read', 'support:write', 'devops:read', 'devops:operate', 'crm:read', 'crm:write'];
