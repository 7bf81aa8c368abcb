/**
 * Deterministic real-shaped catalogs for the benchmark: tool definitions shaped like the ones
 * public MCP servers and function-calling datasets publish (vendor-prefixed names, descriptions of
 * 300-1,000 characters with usage notes and caveats, 5-12 described parameters with enums, formats,
 * arrays and nested objects, rarely aliases or examples), one big tenant plus many small ones, and
 * long natural requests (15-30 words) of the kind users type to an agent. Same seed, same catalog.
 */
import { type BenchTool, prng } from './catalog.js';

type Rand = () => number;
type JsonSchema = Record<string, unknown>;

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const between = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pickSome = <T>(rand: Rand, items: readonly T[], n: number): T[] => {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
};
const words = (identifier: string) => identifier.replace(/_/g, ' ');
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** A field of a resource: becomes a described parameter (and shows up in descriptions). */
interface Field {
  name: string;
  schema: JsonSchema;
  text: string;
}

const str = (text: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra, description: text });
const int = (text: string, minimum: number, maximum: number): JsonSchema => ({ type: 'integer', minimum, maximum, description: text });
const bool = (text: string, fallback: boolean): JsonSchema => ({ type: 'boolean', default: fallback, description: text });
const enumOf = (text: string, values: string[]): JsonSchema => ({ type: 'string', enum: values, description: text });
const listOf = (text: string, items: JsonSchema, maxItems = 50): JsonSchema => ({ type: 'array', items, maxItems, description: text });
const field = (name: string, schema: JsonSchema): Field => ({ name, schema, text: String(schema.description) });

/** Families of services: their resources, the container a resource lives in, and its fields. */
interface Family {
  services: { id: string; display: string; style: 'snake' | 'dotted' | 'camel' }[];
  container: Field;
  resources: string[];
  fields: Field[];
  /** What users complain about or ask for, in their words (used in requests and descriptions). */
  situations: string[];
}

const FAMILIES: Family[] = [
  {
    services: [
      { id: 'github', display: 'GitHub', style: 'snake' },
      { id: 'gitlab', display: 'GitLab', style: 'snake' },
      { id: 'bitbucket', display: 'Bitbucket', style: 'camel' },
    ],
    container: field('repository', str('Repository in owner/name form, for example acme/payments-api.', { pattern: '^[\\w.-]+/[\\w.-]+$' })),
    resources: ['issue', 'pull_request', 'branch', 'release', 'workflow_run', 'commit_status', 'review_comment', 'milestone'],
    fields: [
      field('title', str('Short title shown in lists and notifications.', { maxLength: 256 })),
      field('body', str('Markdown body; mentions such as @user notify that person.')),
      field('labels', listOf('Label names to apply; unknown labels are created.', { type: 'string' }, 20)),
      field('assignees', listOf('Logins of the people responsible.', { type: 'string' }, 10)),
      field('state', enumOf('Lifecycle state to filter by or set.', ['open', 'closed', 'all'])),
      field('base_branch', str('Branch the change is merged into, usually main.')),
      field('draft', bool('Create it as a draft that cannot be merged yet.', false)),
      field('head_sha', str('Full 40-character commit SHA the status refers to.', { minLength: 40, maxLength: 40 })),
    ],
    situations: ['the checkout page crashes on Safari', 'the nightly build has been red since Tuesday', 'the login flow times out for SSO users', 'the release notes are missing the API changes'],
  },
  {
    services: [
      { id: 'jira', display: 'Jira', style: 'snake' },
      { id: 'linear', display: 'Linear', style: 'camel' },
      { id: 'asana', display: 'Asana', style: 'snake' },
      { id: 'clickup', display: 'ClickUp', style: 'dotted' },
    ],
    container: field('project_key', str('Key of the project, for example OPS or WEB.', { pattern: '^[A-Z][A-Z0-9]{1,9}$' })),
    resources: ['issue', 'sprint', 'epic', 'worklog', 'board', 'component', 'subtask', 'saved_filter'],
    fields: [
      field('summary', str('One-line summary of the work item.', { maxLength: 255 })),
      field('priority', enumOf('Priority as configured in the project scheme.', ['highest', 'high', 'medium', 'low', 'lowest'])),
      field('story_points', { type: 'number', minimum: 0, maximum: 100, description: 'Estimate in story points.' }),
      field('due_date', str('Due date (YYYY-MM-DD) in the project time zone.', { format: 'date' })),
      field('reporter', str('Account id or email of the person reporting it.')),
      field('jql', str('Query in the tracker query language, for example status = "In Progress" AND assignee = currentUser().')),
      field('transition', enumOf('Workflow transition to apply.', ['to_do', 'in_progress', 'in_review', 'done', 'wont_do'])),
    ],
    situations: ['the sprint is overloaded', 'the customer escalation from yesterday needs an owner', 'the migration epic slipped a week', 'nobody logged time on the outage'],
  },
  {
    services: [
      { id: 'slack', display: 'Slack', style: 'snake' },
      { id: 'teams', display: 'Microsoft Teams', style: 'camel' },
      { id: 'discord', display: 'Discord', style: 'snake' },
    ],
    container: field('workspace_id', str('Workspace (team) identifier; defaults to the installation workspace.')),
    resources: ['channel', 'message', 'thread_reply', 'user_group', 'reminder', 'pinned_item', 'scheduled_message', 'bookmark'],
    fields: [
      field('channel', str('Channel id or name without the leading #.')),
      field('text', str('Message text; supports the platform markdown and user mentions.', { maxLength: 4000 })),
      field('thread_ts', str('Timestamp of the parent message to reply in its thread.')),
      field('post_at', str('When to post, ISO 8601 date-time; must be within 120 days.', { format: 'date-time' })),
      field('unfurl_links', bool('Show link previews.', true)),
      field('visibility', enumOf('Who can see it.', ['public', 'private', 'shared_external'])),
    ],
    situations: ['the incident channel is flooded', 'the team forgot the retro tomorrow', 'the announcement went to the wrong channel', 'the on-call handover needs a reminder'],
  },
  {
    services: [
      { id: 'gmail', display: 'Gmail', style: 'snake' },
      { id: 'outlook', display: 'Outlook', style: 'camel' },
      { id: 'sendgrid', display: 'SendGrid', style: 'dotted' },
    ],
    container: field('mailbox', str('Mailbox address the action runs on; "me" is the authenticated user.', { default: 'me' })),
    resources: ['email', 'draft', 'label', 'filter_rule', 'attachment', 'contact_list', 'template', 'auto_reply'],
    fields: [
      field('to', listOf('Recipient addresses.', { type: 'string', format: 'email' }, 100)),
      field('cc', listOf('Copy recipients.', { type: 'string', format: 'email' }, 100)),
      field('subject', str('Subject line.', { maxLength: 998 })),
      field('html_body', str('HTML body; a plain-text part is derived automatically.')),
      field('query', str('Search query in the mail search syntax, for example from:alice has:attachment newer_than:7d.')),
      field('importance', enumOf('Importance flag.', ['low', 'normal', 'high'])),
    ],
    situations: ['the invoice reminder bounced', 'the vendor never got the signed contract', 'the newsletter draft has a typo in the subject', 'my inbox is full of build notifications'],
  },
  {
    services: [
      { id: 'google_calendar', display: 'Google Calendar', style: 'snake' },
      { id: 'calendly', display: 'Calendly', style: 'camel' },
      { id: 'zoom', display: 'Zoom', style: 'snake' },
    ],
    container: field('calendar_id', str('Calendar identifier; "primary" is the user\'s main calendar.', { default: 'primary' })),
    resources: ['event', 'meeting', 'availability_window', 'booking_link', 'recording', 'attendee', 'room_reservation', 'recurring_series'],
    fields: [
      field('start', str('Start time, ISO 8601 with offset.', { format: 'date-time' })),
      field('end', str('End time, ISO 8601 with offset; after start.', { format: 'date-time' })),
      field('time_zone', str('IANA time zone such as Europe/Berlin used to interpret local times.')),
      field('attendees', listOf('Attendee email addresses.', { type: 'string', format: 'email' }, 200)),
      field('conference', enumOf('Video conference to attach.', ['none', 'meet', 'zoom', 'teams'])),
      field('send_updates', enumOf('Who gets an email about the change.', ['all', 'external_only', 'none'])),
    ],
    situations: ['the quarterly review clashes with the offsite', 'the candidate can only do Thursday afternoon', 'the weekly sync should move an hour later', 'the board meeting recording is missing'],
  },
  {
    services: [
      { id: 'google_drive', display: 'Google Drive', style: 'snake' },
      { id: 'dropbox', display: 'Dropbox', style: 'camel' },
      { id: 'box', display: 'Box', style: 'dotted' },
      { id: 'aws_s3', display: 'Amazon S3', style: 'snake' },
    ],
    container: field('drive_id', str('Shared drive or bucket the item lives in.')),
    resources: ['file', 'folder', 'share_link', 'file_version', 'permission', 'upload_session', 'trash_item', 'storage_quota'],
    fields: [
      field('path', str('Path of the item from the root, for example /finance/2026/q3-report.xlsx.')),
      field('mime_type', str('MIME type, for example application/pdf.')),
      field('role', enumOf('Access granted to the grantee.', ['viewer', 'commenter', 'editor', 'owner'])),
      field('expires_at', str('When access or the link stops working.', { format: 'date-time' })),
      field('overwrite', bool('Replace an existing item at the same path.', false)),
      field('recursive', bool('Apply to everything inside folders too.', false)),
    ],
    situations: ['the auditors need the Q3 spreadsheets', 'a contractor still has access to the design folder', 'I overwrote the pitch deck by mistake', 'the shared drive is almost out of space'],
  },
  {
    services: [
      { id: 'salesforce', display: 'Salesforce', style: 'camel' },
      { id: 'hubspot', display: 'HubSpot', style: 'snake' },
      { id: 'pipedrive', display: 'Pipedrive', style: 'snake' },
    ],
    container: field('account_id', str('CRM account (company) the record belongs to.')),
    resources: ['contact', 'lead', 'opportunity', 'deal_stage', 'activity_note', 'account', 'quote', 'sales_sequence'],
    fields: [
      field('email', str('Primary email address.', { format: 'email' })),
      field('owner_id', str('User id of the sales rep who owns the record.')),
      field('amount', { type: 'number', minimum: 0, description: 'Deal value in the account currency.' }),
      field('stage', enumOf('Pipeline stage.', ['prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost'])),
      field('close_date', str('Expected close date.', { format: 'date' })),
      field('lead_source', enumOf('Where the lead came from.', ['web', 'referral', 'event', 'outbound', 'partner'])),
    ],
    situations: ['the Acme renewal is stuck in negotiation', 'the trade show leads were never followed up', 'the forecast for this quarter looks too optimistic', 'two reps own the same account'],
  },
  {
    services: [
      { id: 'zendesk', display: 'Zendesk', style: 'snake' },
      { id: 'intercom', display: 'Intercom', style: 'camel' },
      { id: 'freshdesk', display: 'Freshdesk', style: 'dotted' },
    ],
    container: field('brand_id', str('Help-desk brand the request belongs to.')),
    resources: ['ticket', 'macro', 'sla_policy', 'customer_reply', 'satisfaction_rating', 'help_article', 'conversation', 'escalation'],
    fields: [
      field('requester_email', str('Email of the customer who asked.', { format: 'email' })),
      field('priority', enumOf('Ticket priority.', ['low', 'normal', 'high', 'urgent'])),
      field('status', enumOf('Ticket status.', ['new', 'open', 'pending', 'on_hold', 'solved', 'closed'])),
      field('group', str('Support group (queue) to route to, for example Billing Tier 2.')),
      field('public', bool('Whether the comment is visible to the customer.', true)),
      field('tags', listOf('Tags used by triggers and reports.', { type: 'string' }, 30)),
    ],
    situations: ['a customer was double charged and is furious', 'the refund request has waited three days', 'the help article about password resets is outdated', 'the enterprise customer breached their SLA'],
  },
  {
    services: [
      { id: 'stripe', display: 'Stripe', style: 'snake' },
      { id: 'paypal', display: 'PayPal', style: 'camel' },
      { id: 'adyen', display: 'Adyen', style: 'dotted' },
    ],
    container: field('merchant_account', str('Merchant account or connected account id (acct_...).')),
    resources: ['payment_intent', 'refund', 'invoice', 'subscription', 'customer', 'payout', 'dispute', 'coupon'],
    fields: [
      field('amount', int('Amount in the smallest currency unit (cents).', 1, 99_999_999)),
      field('currency', str('Three-letter ISO currency code, lowercase.', { pattern: '^[a-z]{3}$' })),
      field('reason', enumOf('Why, as reported to the card network.', ['duplicate', 'fraudulent', 'requested_by_customer', 'product_not_received'])),
      field('customer_id', str('Customer id (cus_...).')),
      field('idempotency_key', str('Key that makes retries safe; reuse it when retrying the same request.', { maxLength: 255 })),
      field('proration', enumOf('How to bill a mid-cycle change.', ['create_prorations', 'none', 'always_invoice'])),
    ],
    situations: ['the customer was charged twice for the annual plan', 'the payout to our bank failed', 'the chargeback deadline is Friday', 'the coupon from the spring campaign still works'],
  },
  {
    services: [
      { id: 'shopify', display: 'Shopify', style: 'snake' },
      { id: 'woocommerce', display: 'WooCommerce', style: 'camel' },
      { id: 'netsuite', display: 'NetSuite', style: 'dotted' },
    ],
    container: field('store_id', str('Store (shop domain or location) the inventory and orders belong to.')),
    resources: ['order', 'product', 'inventory_level', 'fulfillment', 'purchase_order', 'discount_code', 'return_request', 'price_list'],
    fields: [
      field('sku', str('Stock keeping unit of the variant.')),
      field('quantity', int('Number of units.', 0, 100_000)),
      field('location', str('Warehouse or store location id.')),
      field('tracking_number', str('Carrier tracking number.')),
      field('carrier', enumOf('Shipping carrier.', ['ups', 'fedex', 'dhl', 'usps', 'royal_mail', 'other'])),
      field('notify_customer', bool('Email the customer about the change.', true)),
    ],
    situations: ['the red sneakers show in stock but the shelf is empty', 'the order from last night never shipped', 'a customer wants to return a damaged blender', 'the holiday discount should end at midnight'],
  },
  {
    services: [
      { id: 'datadog', display: 'Datadog', style: 'snake' },
      { id: 'pagerduty', display: 'PagerDuty', style: 'camel' },
      { id: 'grafana', display: 'Grafana', style: 'snake' },
      { id: 'sentry', display: 'Sentry', style: 'dotted' },
    ],
    container: field('service_name', str('Monitored service, as tagged in telemetry (service:checkout).')),
    resources: ['monitor', 'incident', 'alert_rule', 'dashboard', 'on_call_schedule', 'maintenance_window', 'error_event', 'slo'],
    fields: [
      field('query', str('Metric or log query, for example avg(last_5m):avg:http.latency{env:prod} > 800.')),
      field('severity', enumOf('Severity level.', ['sev1', 'sev2', 'sev3', 'sev4'])),
      field('threshold', { type: 'number', description: 'Value that triggers the alert.' }),
      field('window_minutes', int('Evaluation window in minutes.', 1, 1440)),
      field('escalation_policy', str('Escalation policy id that gets paged.')),
      field('silence_until', str('Mute notifications until this time.', { format: 'date-time' })),
    ],
    situations: ['latency on checkout spiked after the deploy', 'we keep getting paged for a flapping disk alert', 'the database is down in eu-west', 'error rates doubled since the last release'],
  },
  {
    services: [
      { id: 'aws_ec2', display: 'Amazon EC2', style: 'snake' },
      { id: 'kubernetes', display: 'Kubernetes', style: 'camel' },
      { id: 'gcp_compute', display: 'Google Compute Engine', style: 'snake' },
      { id: 'vercel', display: 'Vercel', style: 'dotted' },
    ],
    container: field('cluster', str('Cluster, account or project the workload runs in.')),
    resources: ['instance', 'deployment', 'pod', 'batch_job', 'load_balancer', 'secret', 'autoscaling_policy', 'snapshot'],
    fields: [
      field('namespace', str('Namespace or environment, for example prod or staging.', { default: 'default' })),
      field('image', str('Container image reference with tag or digest.')),
      field('replicas', int('Desired number of replicas.', 0, 500)),
      field('region', enumOf('Region to act in.', ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-1'])),
      field('instance_type', str('Machine type, for example m6i.large.')),
      field('grace_period_seconds', int('Seconds to wait before forcefully stopping.', 0, 3600)),
    ],
    situations: ['the batch job has been stuck for six hours', 'the staging cluster costs too much over the weekend', 'the new build needs to roll out to production', 'a pod keeps crash looping after the config change'],
  },
  {
    services: [
      { id: 'snowflake', display: 'Snowflake', style: 'snake' },
      { id: 'bigquery', display: 'BigQuery', style: 'camel' },
      { id: 'databricks', display: 'Databricks', style: 'snake' },
      { id: 'looker', display: 'Looker', style: 'dotted' },
    ],
    container: field('warehouse', str('Warehouse, dataset or workspace to run in.')),
    resources: ['query_job', 'table', 'saved_report', 'scheduled_export', 'data_pipeline', 'column_lineage', 'access_grant', 'notebook_run'],
    fields: [
      field('sql', str('SQL statement to run; read-only unless the tool says otherwise.', { maxLength: 100_000 })),
      field('destination_table', str('Fully qualified table to write results to.')),
      field('format', enumOf('Output format.', ['csv', 'json', 'parquet', 'xlsx'])),
      field('max_rows', int('Stop after this many rows.', 1, 1_000_000)),
      field('cron', str('Schedule in cron syntax, for example 0 6 * * 1-5.')),
      field('timeout_seconds', int('Cancel the job after this many seconds.', 1, 21_600)),
    ],
    situations: ['finance needs last month revenue by region', 'the daily export to the partner failed', 'the churn dashboard shows yesterday as zero', 'marketing wants the signup funnel split by campaign'],
  },
  {
    services: [
      { id: 'workday', display: 'Workday', style: 'camel' },
      { id: 'bamboohr', display: 'BambooHR', style: 'snake' },
      { id: 'greenhouse', display: 'Greenhouse', style: 'snake' },
    ],
    container: field('company_id', str('Company or legal entity in the HR system.')),
    resources: ['employee', 'time_off_request', 'job_posting', 'candidate', 'interview', 'offer_letter', 'payroll_run', 'performance_review'],
    fields: [
      field('employee_id', str('Employee number.')),
      field('department', str('Department name, for example Engineering.')),
      field('start_date', str('First day.', { format: 'date' })),
      field('leave_type', enumOf('Kind of leave.', ['vacation', 'sick', 'parental', 'unpaid', 'bereavement'])),
      field('salary', { type: 'number', minimum: 0, description: 'Annual base salary in the entity currency.' }),
      field('employment_type', enumOf('Contract type.', ['full_time', 'part_time', 'contractor', 'intern'])),
    ],
    situations: ['a new engineer starts on Monday', 'I need two weeks off in August', 'the backend role has no interviews scheduled', 'the offer for the designer needs approval'],
  },
  {
    services: [
      { id: 'notion', display: 'Notion', style: 'snake' },
      { id: 'confluence', display: 'Confluence', style: 'camel' },
      { id: 'docusign', display: 'DocuSign', style: 'dotted' },
    ],
    container: field('space_key', str('Space or workspace key.')),
    resources: ['page', 'database_row', 'comment', 'page_version', 'template', 'envelope', 'signature_request', 'space'],
    fields: [
      field('title', str('Page or document title.')),
      field('content_markdown', str('Content in Markdown; converted to the native format.')),
      field('parent_id', str('Parent page id; the item is created at the space root when absent.')),
      field('signers', listOf('People who must sign, in signing order.', { type: 'object', properties: { email: { type: 'string', format: 'email', description: 'Signer email.' }, name: { type: 'string', description: 'Signer full name.' } }, required: ['email'] }, 20)),
      field('expires_in_days', int('Days until the request expires.', 1, 365)),
      field('archived', bool('Include or set archived state.', false)),
    ],
    situations: ['the onboarding guide still mentions the old VPN', 'the NDA for the new vendor needs signatures', 'someone deleted half of the runbook', 'the meeting notes template is missing the action items section'],
  },
  {
    services: [
      { id: 'mailchimp', display: 'Mailchimp', style: 'snake' },
      { id: 'google_ads', display: 'Google Ads', style: 'camel' },
      { id: 'twilio', display: 'Twilio', style: 'snake' },
    ],
    container: field('audience_id', str('Audience, ad account or messaging service id.')),
    resources: ['campaign', 'audience_segment', 'ad_group', 'sms_message', 'landing_page', 'ab_test', 'budget', 'phone_number'],
    fields: [
      field('name', str('Display name.')),
      field('daily_budget', { type: 'number', minimum: 1, description: 'Daily budget in the account currency.' }),
      field('send_time', str('When to send or start.', { format: 'date-time' })),
      field('body', str('Message or ad copy.', { maxLength: 1600 })),
      field('country_codes', listOf('ISO 3166 country codes to target.', { type: 'string', pattern: '^[A-Z]{2}$' }, 250)),
      field('channel', enumOf('Delivery channel.', ['email', 'sms', 'whatsapp', 'search', 'display'])),
    ],
    situations: ['the Black Friday campaign is overspending', 'customers in Germany got the English newsletter', 'the SMS reminder went out twice', 'the new landing page converts worse than the old one'],
  },
];

/** Actions: the verb in names, the phrase that starts a description, users' words, and effects. */
interface Action {
  verb: string;
  lead: string;
  user: string[];
  effects: boolean;
  admin?: boolean;
  needsId: boolean;
  usage: string;
}

const ACTIONS: Action[] = [
  { verb: 'list', lead: 'Lists', user: ['show me all the', 'list every', 'which are the', 'give me a list of the'], effects: false, needsId: false, usage: 'browse or count' },
  { verb: 'get', lead: 'Retrieves a single', user: ['look up the', 'pull up the', 'show me the details of the', 'find the'], effects: false, needsId: true, usage: 'read the full details of one known' },
  { verb: 'search', lead: 'Searches for', user: ['search for any', 'find all the', 'dig up the', 'look for'], effects: false, needsId: false, usage: 'find items by free text or filters when the id is unknown, for' },
  { verb: 'create', lead: 'Creates a new', user: ['create a new', 'open a', 'set up a', 'add a'], effects: true, needsId: false, usage: 'make a new' },
  { verb: 'update', lead: 'Updates an existing', user: ['change the', 'edit the', 'update the', 'fix the'], effects: true, needsId: true, usage: 'change fields of an existing' },
  { verb: 'delete', lead: 'Permanently deletes a', user: ['delete the', 'remove the', 'get rid of the', 'wipe the'], effects: true, admin: true, needsId: true, usage: 'permanently remove a' },
  { verb: 'archive', lead: 'Archives a', user: ['archive the', 'put away the', 'hide the old'], effects: true, needsId: true, usage: 'hide a no longer active' },
  { verb: 'restore', lead: 'Restores a previously archived or deleted', user: ['bring back the', 'restore the', 'undo the deletion of the'], effects: true, needsId: true, usage: 'undo the archiving or deletion of a' },
  { verb: 'export', lead: 'Exports', user: ['export the', 'download all the', 'give me a spreadsheet of the'], effects: false, needsId: false, usage: 'produce a downloadable file of' },
  { verb: 'assign', lead: 'Assigns an owner to a', user: ['assign the', 'hand over the', 'give ownership of the'], effects: true, needsId: true, usage: 'change who is responsible for a' },
  { verb: 'close', lead: 'Closes a', user: ['close the', 'resolve the', 'mark as done the'], effects: true, needsId: true, usage: 'finish a' },
  { verb: 'cancel', lead: 'Cancels a pending or running', user: ['cancel the', 'stop the', 'call off the', 'kill the stuck'], effects: true, needsId: true, usage: 'stop a pending or running' },
  { verb: 'approve', lead: 'Approves a', user: ['approve the', 'sign off on the', 'accept the'], effects: true, needsId: true, usage: 'approve a waiting' },
  { verb: 'sync', lead: 'Synchronizes', user: ['sync the', 'refresh the', 'pull the latest'], effects: true, needsId: false, usage: 'bring up to date the local copy of' },
  { verb: 'summarize', lead: 'Summarizes activity on', user: ['summarize the', 'give me an overview of the', 'recap the'], effects: false, needsId: false, usage: 'get a short digest of recent' },
  { verb: 'schedule', lead: 'Schedules', user: ['schedule the', 'plan the', 'set a time for the'], effects: true, needsId: false, usage: 'run or publish later a' },
  { verb: 'duplicate', lead: 'Duplicates an existing', user: ['copy the', 'duplicate the', 'clone the'], effects: true, needsId: true, usage: 'make a copy of an existing' },
  { verb: 'share', lead: 'Shares a', user: ['share the', 'give access to the', 'send a link to the'], effects: true, needsId: true, usage: 'give other people access to a' },
];

/** Instance qualifiers: real catalogs install the same connector several times (regions, stages). */
const INSTANCES = ['eu', 'us', 'staging', 'prod', 'legacy', 'v2', 'internal', 'partner', 'sandbox', 'emea', 'apac', 'finance', 'ops', 'acme', 'beta'];

const CAVEATS = [
  (r: string, svc: string) => `Results are paginated: pass the cursor from the previous response to fetch the next page; ${svc} returns at most 100 ${r}s per page.`,
  (_: string, svc: string) => `Rate limited to 50 requests per minute per workspace by ${svc}; on HTTP 429 wait for the Retry-After header before retrying.`,
  (r: string) => `Archived ${r}s are excluded unless include_archived is true.`,
  () => `All timestamps are ISO 8601 in UTC; local times are converted with the time_zone parameter when given.`,
  (r: string) => `The ${r} must not be locked by another process; locked items return a conflict error that names the holder.`,
  (_: string, svc: string) => `Requires an OAuth token with the matching ${svc} permission; the call fails with 403 when the connected account lacks it.`,
  () => `Safe to retry with the same idempotency_key: the second call returns the first result instead of acting twice.`,
  (r: string) => `Large ${r} collections may take several seconds; use the filter object to narrow the result instead of fetching everything.`,
  () => `Changes are visible to other users immediately and are recorded in the audit trail with the caller's identity.`,
  (r: string) => `Custom fields configured by administrators are returned under custom_fields; unknown keys are ignored when writing a ${r}.`,
  () => `Returns a validation error naming the offending field when a value does not match the workspace configuration.`,
  (r: string, svc: string) => `Webhooks subscribed to ${r} events in ${svc} fire after this call succeeds.`,
];

const OPENERS = ['Hey, could you', 'Please', 'Can you', 'I need you to', 'Quick one:', 'When you get a chance,', 'Hi there, I want to', 'Urgent:', 'Could you please', 'I would like to'];
const PEOPLE = ['Alice', 'Bob', 'Chen', 'Dana', 'Emeka', 'Farah', 'Goran', 'Hana', 'Ivan', 'Julia', 'Kofi', 'Lena', 'Mateo', 'Nadia', 'Omar', 'Priya'];
const PROJECTS = ['payments-api', 'mobile app', 'data platform', 'website redesign', 'Q3 launch', 'billing migration', 'partner portal', 'checkout revamp'];
const TIMES = ['before Friday', 'by the end of the day', 'from last week', 'since Monday', 'for the last thirty days', 'before the release tomorrow', 'from the previous quarter', 'this morning'];
const CLAUSES = [
  (rand: Rand) => `for the ${pick(rand, PROJECTS)} project`,
  (rand: Rand) => `that ${pick(rand, PEOPLE)} mentioned in standup`,
  (rand: Rand) => `and let ${pick(rand, PEOPLE)} know when it is done`,
  (rand: Rand) => pick(rand, TIMES),
  () => 'because the customer keeps asking about it',
  () => 'and make sure nothing else is affected',
  (rand: Rand) => `so ${pick(rand, PEOPLE)} can review it`,
  () => 'if that is possible without admin rights',
];

/** Where a tool comes from: family, service, resource and action, drawn from one PRNG. */
interface Pick {
  family: Family;
  service: Family['services'][number];
  resource: string;
  action: Action;
}

function drawPick(rand: Rand): Pick {
  const family = pick(rand, FAMILIES);
  return { family, service: pick(rand, family.services), resource: pick(rand, family.resources), action: pick(rand, ACTIONS) };
}

function toolName(p: Pick, instance: string | undefined): string {
  const service = instance ? `${p.service.id}_${instance}` : p.service.id;
  const object = p.action.needsId || p.action.verb === 'create' || p.action.verb === 'schedule' ? p.resource : `${p.resource}s`;
  if (p.service.style === 'camel') {
    const parts = `${p.action.verb}_${object}`.split('_');
    return `${service}_${parts[0]}${parts.slice(1).map(capitalize).join('')}`;
  }
  return p.service.style === 'dotted' ? `${service}.${p.action.verb}_${object}` : `${service}_${p.action.verb}_${object}`;
}

/** A description of 300-1,000 characters: what, when to use, what it returns, caveats. */
function describe(rand: Rand, p: Pick, fields: Field[], siblingVerb: string): string {
  const r = words(p.resource);
  const svc = p.service.display;
  const plural = p.action.needsId || p.action.verb === 'create' || p.action.verb === 'schedule' ? r : `${r}s`;
  const sentences = [
    `${p.action.lead} ${plural} in ${svc}${p.action.needsId ? ` identified by its ${p.resource}_id` : ''}.`,
    `Use it when you need to ${p.action.usage} ${r}${p.action.needsId || p.action.usage.endsWith(' a') ? '' : 's'}, for example when ${pick(rand, p.family.situations)}.`,
    `Accepts ${fields.slice(0, 3).map((f) => words(f.name)).join(', ')} and more; ${fields[0] ? `${words(fields[0].name)} is ${fields[0].text.charAt(0).toLowerCase()}${fields[0].text.slice(1)}` : 'see the parameters'}`,
    p.action.effects
      ? `Returns the resulting ${r} with its id, current state, the time of the change and a link that opens it in ${svc}.`
      : `Returns matching ${r} records with their id, title or name, owner, state and last update time, newest first.`,
    `Do not use it to ${siblingVerb} a ${r}; a separate tool does that.`,
  ];
  const target = between(rand, 300, 1000);
  for (const caveat of pickSome(rand, CAVEATS, CAVEATS.length)) {
    if (sentences.join(' ').length >= target) break;
    sentences.push(caveat(r, svc));
  }
  let text = sentences.join(' ');
  while (text.length > 1000) text = text.slice(0, text.lastIndexOf('. ', 998) + 1);
  return text;
}

/** 5-12 described parameters: container, id, resource fields, common options, nested objects. */
function parametersOf(rand: Rand, p: Pick): { schema: BenchTool['parameters']; fields: Field[] } {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const add = (f: Field, isRequired = false) => {
    if (properties[f.name]) return;
    properties[f.name] = f.schema;
    if (isRequired) required.push(f.name);
  };
  add(p.family.container, rand() < 0.7);
  if (p.action.needsId) add(field(`${p.resource}_id`, str(`Identifier of the ${words(p.resource)}, as returned by the list and search tools.`)), true);
  const own = pickSome(rand, p.family.fields, between(rand, 2, Math.min(5, p.family.fields.length)));
  own.forEach((f, i) => add(f, p.action.verb === 'create' && i === 0));
  if (!p.action.needsId) {
    add(field('limit', int('Maximum number of items to return.', 1, 100)));
    add(field('cursor', str('Opaque cursor from a previous response, to fetch the next page.')));
    add(field('sort', enumOf('Sort order of the results.', ['newest', 'oldest', 'recently_updated', 'relevance'])));
    add(
      field('filter', {
        type: 'object',
        description: `Narrows the ${words(p.resource)}s considered; all given conditions must hold.`,
        properties: {
          owner: { type: 'string', description: 'Only items owned by this user id or email.' },
          updated_after: { type: 'string', format: 'date-time', description: 'Only items changed after this time.' },
          include_archived: { type: 'boolean', default: false, description: 'Also consider archived items.' },
          ...(rand() < 0.5 ? { labels: { type: 'array', items: { type: 'string' }, description: 'Items carrying every one of these labels.' } } : {}),
        },
        additionalProperties: false,
      }),
    );
  }
  if (p.action.effects) {
    if (rand() < 0.6) add(field('idempotency_key', str('Client key that makes a retried call act once.', { maxLength: 128 })));
    if (rand() < 0.5) add(field('dry_run', bool('Validate and report what would change without changing anything.', false)));
    if (rand() < 0.5) {
      add(
        field('notify', {
          type: 'object',
          description: 'Who hears about the change.',
          properties: {
            watchers: { type: 'boolean', default: true, description: 'Notify everyone watching the item.' },
            message: { type: 'string', maxLength: 500, description: 'Optional note included in the notification.' },
            channels: { type: 'array', items: { type: 'string', enum: ['email', 'in_app', 'chat'] }, description: 'Where to send it.' },
          },
          additionalProperties: false,
        }),
      );
    }
  }
  if (rand() < 0.4) add(field('metadata', { type: 'object', additionalProperties: { type: 'string', maxLength: 500 }, maxProperties: 50, description: 'Free-form key-value pairs stored with the item.' }));
  if (rand() < 0.4) add(field('fields', listOf('Limit the response to these fields to keep it small.', { type: 'string' }, 40)));
  const extras = [
    field('include_deleted', bool('Also return items in the trash.', false)),
    field('locale', str('Language for generated text, BCP 47 (en-US, de-DE).')),
    field('expand', listOf('Related objects to embed in the response.', { type: 'string', enum: ['owner', 'comments', 'history', 'attachments'] }, 4)),
    field('timeout_ms', int('Give up after this many milliseconds.', 100, 60_000)),
  ];
  for (const f of extras) if (Object.keys(properties).length < 5) add(f);
  while (Object.keys(properties).length > 12) {
    const drop = Object.keys(properties).reverse().find((k) => !required.includes(k))!;
    delete properties[drop];
  }
  const fields = Object.entries(properties).map(([name, schema]) => ({ name, schema, text: String(schema.description) }));
  return { schema: { type: 'object', properties, required, additionalProperties: false }, fields: own.length > 0 ? own : fields };
}

/** One tenant's real-shaped tools, `count` of them, deterministic for (seed, tenantIndex). */
export function generateRealTools(seed: number, tenantIndex: number, count: number): BenchTool[] {
  const rand = prng(seed * 2_000_003 + tenantIndex * 7 + 1);
  const seen = new Set<string>();
  const tools: BenchTool[] = [];
  while (tools.length < count) {
    const p = drawPick(rand);
    let name = toolName(p, undefined);
    for (let n = 0; seen.has(name); n += 1) {
      const instance = `${INSTANCES[n % INSTANCES.length]}${n >= INSTANCES.length ? Math.floor(n / INSTANCES.length) : ''}`;
      name = toolName(p, instance);
    }
    seen.add(name);
    const { schema, fields } = parametersOf(rand, p);
    const sibling = pick(rand, ACTIONS.filter((a) => a.verb !== p.action.verb)).verb;
    const r = words(p.resource);
    const write = p.action.effects;
    const sensitivity = p.action.admin ? 'high' : write ? 'medium' : 'low';
    const scope = `${p.service.id}:${p.action.admin ? 'admin' : write ? 'write' : 'read'}`;
    const scoped = sensitivity === 'high' || rand() < 0.7;
    tools.push({
      name,
      version: `${between(rand, 1, 4)}.${between(rand, 0, 12)}.${between(rand, 0, 9)}`,
      description: describe(rand, p, fields, sibling),
      // Real definitions rarely carry curated card fields: a minority has some.
      ...(rand() < 0.15 ? { summary: `${p.action.lead} ${r}s in ${p.service.display}.`.slice(0, 200) } : {}),
      ...(rand() < 0.2 ? { not_for: `Not for ${sibling === 'delete' ? 'deleting' : `${sibling}ing`} a ${r}; use the ${p.service.display} ${sibling} tool.` } : {}),
      aliases: rand() < 0.25 ? pickSome(rand, p.action.user, between(rand, 1, 2)).map((u) => `${u} ${r}`) : [],
      examples: rand() < 0.2 ? [`${capitalize(pick(rand, p.action.user))} ${r} ${pick(rand, CLAUSES)(rand)}`] : [],
      tags: [p.service.id, write ? 'write' : 'read'],
      category: p.service.id,
      required_scopes: scoped ? [scope] : [],
      sensitivity,
      side_effects: write,
      parameters: schema,
    });
  }
  return tools;
}

/** Every service id, in a fixed order. */
const SERVICE_IDS = FAMILIES.flatMap((f) => f.services.map((s) => s.id));

/** The caller of the real catalog: read and write on all services but four, admin on a few. */
export function realCallerScopes(): string[] {
  return SERVICE_IDS.slice(0, SERVICE_IDS.length - 4).flatMap((s, i) => [`${s}:read`, `${s}:write`, ...(i % 5 === 0 ? [`${s}:admin`] : [])]);
}

/** Tools of small tenant `t` (1-based): 0.1% to 1% of the big tenant's size, at least 10. */
export function smallTenantSize(seed: number, t: number, size: number): number {
  const rand = prng(seed * 31 + t);
  return Math.max(10, Math.round(size * (0.001 + rand() * 0.009)));
}

/** The i-th long natural request (15-30 words) of a stream: distinct for every i. */
export function realRequestText(seed: number, i: number): string {
  const rand = prng(seed * 104_729 + i);
  const p = drawPick(rand);
  const r = words(p.action.needsId || p.action.verb === 'create' ? p.resource : `${p.resource}s`);
  const adjective = rand() < 0.5 ? `${pick(rand, ['urgent', 'latest', 'old', 'shared', 'open', 'failed'])} ` : '';
  let text = `${pick(rand, OPENERS)} ${pick(rand, p.action.user)} ${adjective}${r}${rand() < 0.6 ? ` in ${p.service.display}` : ''}, ${pick(rand, ['since', 'because', 'as', 'now that'])} ${pick(rand, p.family.situations)}`;
  // A ticket-like reference (two words) keeps every request text distinct (embedding cache misses).
  const count = (t: string) => t.split(/\s+/).length + 2;
  const target = between(rand, 15, 30);
  for (const clause of pickSome(rand, CLAUSES, CLAUSES.length)) {
    if (count(text) >= target) break;
    const longer = `${text} ${clause(rand)}`;
    if (count(longer) > 30) break;
    text = longer;
  }
  return `${text} (ref ${1000 + i})`;
}

/** A value that satisfies `schema` (required properties only, recursively). */
export function valueFor(schema: JsonSchema): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      for (const key of (schema.required ?? []) as string[]) out[key] = valueFor(properties[key] ?? {});
      return out;
    }
    case 'array':
      return [];
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 10;
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum + 0.5 : 12.5;
    case 'boolean':
      return true;
    default:
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema.format === 'date') return '2026-01-01';
      if (schema.format === 'email') return 'dana@example.com';
      if (typeof schema.pattern === 'string') return examplesFor(schema.pattern);
      if (typeof schema.minLength === 'number') return 'a'.repeat(schema.minLength);
      return 'x-123';
  }
}

/** A string for each pattern the generator uses. */
function examplesFor(pattern: string): string {
  const known: Record<string, string> = {
    '^[\\w.-]+/[\\w.-]+$': 'acme/payments-api',
    '^[A-Z][A-Z0-9]{1,9}$': 'OPS',
    '^[a-z]{3}$': 'usd',
    '^[A-Z]{2}$': 'DE',
  };
  const value = known[pattern];
  if (value === undefined) throw new Error(`no example for pattern ${pattern}`);
  return value;
}

/** Arguments that satisfy a real-shaped tool's schema (for /v1/authorize). */
export const realValidArguments = (tool: BenchTool): Record<string, unknown> => valueFor(tool.parameters) as Record<string, unknown>;
