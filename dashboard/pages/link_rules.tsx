// A link's rules, split, forwarding and password (the rules editor), its split results with a
// chart, and its QR designer. Forms that work without JavaScript: every add, remove and move
// button posts the whole form and gets it back changed; dashboard/assets/editor.js does the same
// without reloading the page, and updates the QR preview as options change.
import type { Environment } from "../../services/projects/projects.ts";
import type { Session } from "../../services/access/sessions.ts";
import type { DashboardLinkRow } from "../../services/links/dashboard.ts";
import type { SplitResults } from "../../services/links/split_results.ts";
import { assetUrl } from "../assets.ts";
import {
  Checkbox,
  Csrf,
  envBase,
  envCrumbs,
  EnvHeader,
  formatNumber,
  Layout,
  Notice,
} from "../layout.tsx";
import { may } from "../security.ts";
import {
  CONDITION_HINTS,
  CONDITION_LABELS,
  CONDITION_TYPES,
  type Draft,
  type DraftErrors,
  type DraftVariant,
  MAX_DRAFT_RULES,
} from "../rules_form.ts";

interface PageBase {
  session: Session;
  env: Environment;
  projectName: string;
  link: DashboardLinkRow;
}

function FieldError(props: { errors: DraftErrors | undefined; name: string }) {
  const message = props.errors?.fields[props.name];
  return message ? <p class="error-text" id={`${props.name}-error`}>{message}</p> : null;
}

const invalid = (errors: DraftErrors | undefined, name: string) =>
  errors?.fields[name] ? { "aria-invalid": "true", "aria-describedby": `${name}-error` } : {};

/** A button that changes the draft: posts the form with its operation, never validates it. */
function Op(props: { op: string; label: string; children: string; kind?: "danger" }) {
  return (
    <button
      type="submit"
      name="op"
      value={props.op}
      formnovalidate
      class={`button secondary small${props.kind === "danger" ? " danger-text" : ""}`}
      aria-label={props.label}
    >
      {props.children}
    </button>
  );
}

function Variants(props: {
  prefix: string;
  op: string;
  variants: DraftVariant[];
  errors: DraftErrors | undefined;
}) {
  return (
    <div class="variants">
      {props.variants.map((v, j) => {
        const url = `${props.prefix}v${j}_url`;
        const weight = `${props.prefix}v${j}_weight`;
        return (
          <div class="variant-row">
            <div class="field grow">
              <label for={url}>Variant {j + 1} URL</label>
              <input
                id={url}
                name={url}
                type="url"
                value={v.url}
                placeholder="https://example.com/a"
                {...invalid(props.errors, url)}
              />
              <FieldError errors={props.errors} name={url} />
            </div>
            <div class="field weight">
              <label for={weight}>Weight</label>
              <input
                id={weight}
                name={weight}
                type="number"
                min="1"
                max="1000"
                inputmode="numeric"
                value={v.weight}
                {...invalid(props.errors, weight)}
              />
              <FieldError errors={props.errors} name={weight} />
            </div>
            <Op
              op={`remove-variant:${props.op}:${j}`}
              label={`Remove variant ${j + 1}`}
              kind="danger"
            >
              Remove
            </Op>
          </div>
        );
      })}
      <Op op={`add-variant:${props.op}`} label="Add a variant">+ Variant</Op>
    </div>
  );
}

function RuleFields(props: { draft: Draft; i: number; errors: DraftErrors | undefined }) {
  const { i, errors } = props;
  const rule = props.draft.rules[i]!;
  const p = `r${i}_`;
  const count = props.draft.rules.length;
  return (
    <fieldset class="rule" data-rule={i}>
      <legend>Rule {i + 1}{rule.name ? `: ${rule.name}` : ""}</legend>
      <div class="rule-tools">
        {i > 0 && <Op op={`up-rule:${i}`} label={`Move rule ${i + 1} up`}>↑ Up</Op>}
        {i < count - 1 && <Op op={`down-rule:${i}`} label={`Move rule ${i + 1} down`}>↓ Down</Op>}
        <Op op={`remove-rule:${i}`} label={`Remove rule ${i + 1}`} kind="danger">Remove rule</Op>
      </div>
      <div class="field">
        <label for={`${p}name`}>Name (what views record)</label>
        <input
          id={`${p}name`}
          name={`${p}name`}
          type="text"
          value={rule.name}
          placeholder={`rule ${i + 1}`}
        />
        <FieldError errors={errors} name={`${p}name`} />
      </div>
      <p class="muted">When every condition holds (a list matches any of its values):</p>
      <div class="conditions">
        {rule.conditions.map((c, j) => {
          const type = `${p}c${j}_type`;
          const value = `${p}c${j}_value`;
          return (
            <div class="cond-row">
              <div class="field">
                <label for={type}>Condition {j + 1}</label>
                <select id={type} name={type} data-hints>
                  {CONDITION_TYPES.map((t) => (
                    <option value={t} selected={t === c.type} data-hint={CONDITION_HINTS[t]}>
                      {CONDITION_LABELS[t]}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field grow">
                <label for={value}>is</label>
                <input
                  id={value}
                  name={value}
                  type="text"
                  value={c.value}
                  placeholder={CONDITION_HINTS[c.type]}
                  {...invalid(errors, value)}
                />
                <FieldError errors={errors} name={value} />
              </div>
              <Op
                op={`remove-cond:${i}:${j}`}
                label={`Remove condition ${j + 1} of rule ${i + 1}`}
                kind="danger"
              >
                Remove
              </Op>
            </div>
          );
        })}
        {rule.conditions.length === 0 && <p class="muted">No condition: every hit matches.</p>}
        <Op op={`add-cond:${i}`} label={`Add a condition to rule ${i + 1}`}>+ Condition</Op>
      </div>
      <div class="mode" role="radiogroup" aria-label={`Where rule ${i + 1} sends the visitor`}>
        <label class="radio">
          <input type="radio" name={`${p}mode`} value="url" checked={rule.mode === "url"} />{" "}
          Send to one URL
        </label>
        <label class="radio">
          <input type="radio" name={`${p}mode`} value="split" checked={rule.mode === "split"} />
          {" "}
          Split between variants
        </label>
      </div>
      <div class="mode-url field">
        <label for={`${p}url`}>URL</label>
        <input
          id={`${p}url`}
          name={`${p}url`}
          type="url"
          value={rule.url}
          placeholder="https://example.com/de"
          {...invalid(errors, `${p}url`)}
        />
        <FieldError errors={errors} name={`${p}url`} />
      </div>
      <div class="mode-split">
        <Variants prefix={p} op={String(i)} variants={rule.variants} errors={errors} />
        <FieldError errors={errors} name={`${p}split`} />
      </div>
    </fieldset>
  );
}

export function RulesPage(
  props: PageBase & {
    draft: Draft;
    errors?: DraftErrors | undefined;
    notice?: string | undefined;
    results: SplitResults[];
  },
) {
  const l = props.link;
  const base = `${envBase(props.env.id)}/links/${l.path}`;
  const { draft, errors } = props;
  const canWrite = may(props.session, "links.write");
  return (
    <Layout
      title={`Rules · ${l.title || l.path}`}
      session={props.session}
      crumbs={[
        ...envCrumbs(props.env, props.projectName, "Links").slice(0, -1),
        { label: l.title || l.path, href: base },
        { label: "Rules and split" },
      ]}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="links"
      />
      {props.notice && <Notice>{props.notice}</Notice>}
      {errors && (errors.general.length > 0 || Object.keys(errors.fields).length > 0) && (
        <Notice kind="error">
          Nothing was saved:{" "}
          {errors.general.length > 0
            ? errors.general.join(" ")
            : "correct the fields marked below."}
        </Notice>
      )}
      {props.results.length > 0 && may(props.session, "analytics.read") && (
        <section class="card" aria-labelledby="results-h">
          <h2 id="results-h">Split results</h2>
          {props.results.map((r) => <SplitResultsView key={String(r.rule)} results={r} />)}
        </section>
      )}
      {canWrite
        ? (
          <form method="post" action={`${base}/rules`} class="card rules-editor" data-editor>
            <Csrf session={props.session} />
            {/* Enter in a field saves, as the first submit button of the form. */}
            <button type="submit" name="op" value="save" class="offscreen" tabindex={-1}>
              Save
            </button>
            <h2>Rules</h2>
            <p class="muted">
              Tried in order: the first rule whose conditions all hold decides where the visitor
              goes. Hits no rule takes go to the split below, else to the link's own URLs.
            </p>
            {draft.rules.map((_r, i) => <RuleFields key={i} draft={draft} i={i} errors={errors} />)}
            {draft.rules.length === 0 && <p class="muted">No rules yet.</p>}
            {draft.rules.length < MAX_DRAFT_RULES && (
              <Op op="add-rule" label="Add a rule">+ Rule</Op>
            )}

            <h2>Split for every other hit</h2>
            <p class="muted">
              Each new visitor gets a variant by weight and keeps it (a first-party cookie). Leave
              it empty for no split.
            </p>
            <Variants prefix="s" op="top" variants={draft.split} errors={errors} />

            <h2>Forwarding</h2>
            <Checkbox
              name="forward_query"
              label="Forward the visitor's query parameters"
              checked={draft.forwardQuery}
              hint="Added to the destination; its own parameters win."
            />
            <Checkbox
              name="append_utm"
              label="Add the tracking fields as utm_campaign, utm_source, utm_medium"
              checked={draft.appendUtm}
              hint="Only where the destination lacks them."
            />

            <h2>Password</h2>
            <p class="muted">
              {l.password_hash !== null
                ? "This link asks visitors for a password. Type a new one to replace it."
                : "Visitors must enter this password before they are sent on. Leave empty for none."}
            </p>
            <div class="field">
              <label for="password">{l.password_hash !== null ? "New password" : "Password"}</label>
              <input
                id="password"
                name="password"
                type="password"
                autocomplete="new-password"
                {...invalid(errors, "password")}
              />
              <FieldError errors={errors} name="password" />
            </div>
            {l.password_hash !== null && (
              <Checkbox
                name="remove_password"
                label="Remove the password"
                checked={draft.removePassword}
              />
            )}
            <div class="actions save-actions">
              <button type="submit" name="op" value="save" class="button">Save rules</button>
              <a href={base}>Cancel</a>
            </div>
          </form>
        )
        : <RulesSummary link={l} />}
      <script src={assetUrl("editor.js")} defer></script>
    </Layout>
  );
}

/** The rules and split as text, for those who may read but not change them. */
export function RulesSummary(props: { link: DashboardLinkRow }) {
  const l = props.link;
  const rules = l.rules ?? [];
  return (
    <section class="card" aria-labelledby="rules-h">
      <h2 id="rules-h">Rules</h2>
      {rules.length === 0 && <p class="muted">No rules.</p>}
      <ol class="rule-list">
        {rules.map((r, i) => (
          <li>
            <strong>{r.name ?? `Rule ${i + 1}`}</strong>: when <code>{JSON.stringify(r.when)}</code>
            {" "}
            → {r.url ? <code>{r.url}</code> : `split between ${r.split?.length ?? 0} variants`}
          </li>
        ))}
      </ol>
      {l.split && <p>Every other hit: split between {l.split.length} variants.</p>}
      <p class="muted">
        {l.forward_query ? "Forwards the query. " : ""}
        {l.append_utm ? "Adds UTM parameters. " : ""}
        {l.password_hash !== null ? "Asks for a password." : ""}
      </p>
    </section>
  );
}

/** A split's figures: a bar chart of views and of the probability of being best, and a table. */
export function SplitResultsView(props: { results: SplitResults }) {
  const r = props.results;
  const maxViews = Math.max(1, ...r.variants.map((v) => v.views));
  const rowHeight = 44;
  const width = 320;
  const label = r.rule === null ? "The link's split" : `Rule ${r.rule}'s split`;
  return (
    <div class="split-results">
      <h3>{label}</h3>
      {!r.enough_data && (
        <p class="notice warn-notice">
          Not enough data yet: every variant needs 100 views before its figures can decide.
        </p>
      )}
      <svg
        class="chart"
        viewBox={`0 0 ${width} ${r.variants.length * rowHeight + 8}`}
        role="img"
        aria-label={`${label}: views and probability of being best per variant`}
      >
        {r.variants.map((v, i) => {
          const y = i * rowHeight + 4;
          // Room at the right for the figure after the longest bar.
          const views = (v.views / maxViews) * (width - 150);
          const best = v.probability_best * (width - 150);
          return (
            <g>
              <text x="0" y={y + 14} class="chart-label">Variant {v.variant}</text>
              <rect x="100" y={y + 2} width={Math.max(1, views)} height="14" class="bar-views" />
              <text x={104 + views} y={y + 14} class="chart-value">{formatNumber(v.views)}</text>
              <rect x="100" y={y + 20} width={Math.max(1, best)} height="14" class="bar-best" />
              <text x={104 + best} y={y + 32} class="chart-value">
                {Math.round(v.probability_best * 100)}%
              </text>
            </g>
          );
        })}
      </svg>
      <p class="legend">
        <span class="key key-views"></span> views <span class="key key-best"></span>{" "}
        probability of being best
      </p>
      <ol class="variant-urls">
        {r.variants.map((v) => (
          <li>
            <code class="url">{v.url}</code>
          </li>
        ))}
      </ol>
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">Variant</th>
              <th scope="col">Weight</th>
              <th scope="col" class="num">Views</th>
              <th scope="col" class="num">Installs</th>
              <th scope="col" class="num">Conversion</th>
              <th scope="col" class="num">Purchases</th>
              <th scope="col" class="num">Revenue</th>
              <th scope="col" class="num">Best</th>
            </tr>
          </thead>
          <tbody>
            {r.variants.map((v) => (
              <tr>
                <th scope="row">{v.variant}</th>
                <td>{v.weight}</td>
                <td class="num">{formatNumber(v.views)}</td>
                <td class="num">{formatNumber(v.installs)}</td>
                <td class="num">{(v.conversion_rate * 100).toFixed(1)}%</td>
                <td class="num">{formatNumber(v.purchases)}</td>
                <td class="num">{formatNumber(v.revenue)}</td>
                <td class="num">{Math.round(v.probability_best * 100)}%</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

export interface QrDesign {
  format: string;
  size: string;
  fg: string;
  bg: string;
  transparent: boolean;
  margin: string;
  ecc: string;
  logo: boolean;
}

/** The QR designer: options on the left, the preview on the right, downloads below. */
export function QrPage(
  props: PageBase & {
    linkUrl: string;
    design: QrDesign;
    error?: string | undefined;
    hasLogo: boolean;
  },
) {
  const l = props.link;
  const base = `${envBase(props.env.id)}/links/${l.path}`;
  const d = props.design;
  const query = (format: string, download = false) =>
    new URLSearchParams({
      format,
      size: d.size,
      fg: d.fg,
      bg: d.transparent ? "transparent" : d.bg,
      margin: d.margin,
      ecc: d.ecc,
      logo: d.logo ? "1" : "0",
      ...(download ? { download: "1" } : {}),
    }).toString();
  return (
    <Layout
      title={`QR code · ${l.title || l.path}`}
      session={props.session}
      crumbs={[
        ...envCrumbs(props.env, props.projectName, "Links").slice(0, -1),
        { label: l.title || l.path, href: base },
        { label: "QR code" },
      ]}
    >
      <EnvHeader
        session={props.session}
        env={props.env}
        projectName={props.projectName}
        active="links"
      />
      <div class="grid qr-designer">
        <form method="get" action={`${base}/qr`} class="card" data-qr-designer>
          <h2>QR code design</h2>
          <p class="muted">
            Codes decode to <code>{props.linkUrl}</code>.
          </p>
          <div class="two">
            <div class="field">
              <label for="qr-fg">Modules</label>
              <input id="qr-fg" name="fg" type="color" value={d.fg} />
            </div>
            <div class="field">
              <label for="qr-bg">Background</label>
              <input id="qr-bg" name="bg" type="color" value={d.bg} />
            </div>
          </div>
          <Checkbox name="transparent" label="Transparent background" checked={d.transparent} />
          <div class="two">
            <div class="field">
              <label for="qr-size">Size (pixels)</label>
              <input id="qr-size" name="size" type="number" min="64" max="2048" value={d.size} />
            </div>
            <div class="field">
              <label for="qr-margin">Margin (modules)</label>
              <input id="qr-margin" name="margin" type="number" min="0" max="16" value={d.margin} />
            </div>
          </div>
          <div class="field">
            <label for="qr-ecc">Error correction</label>
            <select id="qr-ecc" name="ecc">
              {[["L", "Low (7%)"], ["M", "Medium (15%)"], ["Q", "Quartile (25%)"], [
                "H",
                "High (30%)",
              ]].map(([v, label]) => (
                <option key={v} value={v} selected={d.ecc === v}>{label}</option>
              ))}
            </select>
          </div>
          {props.hasLogo
            ? (
              <Checkbox
                name="logo"
                label="The project's logo in the middle"
                checked={d.logo}
                hint="Error correction is then High."
              />
            )
            : (
              <p class="hint">
                A logo can be set for the project with PUT /api/v1/admin/projects/:hashid/qr_logo.
              </p>
            )}
          <div class="actions">
            <button type="submit" class="button">Preview</button>
          </div>
        </form>
        <section class="card qr-preview" aria-labelledby="qr-preview-h">
          <h2 id="qr-preview-h">Preview</h2>
          <p class="error-text" role="alert" data-qr-error>{props.error ?? ""}</p>
          {!props.error && (
            <img
              class="qr"
              src={`${base}/qr-image?${query("svg")}`}
              alt={`QR code for ${props.linkUrl}`}
              width="240"
              height="240"
              data-qr-preview
            />
          )}
          {!props.error && (
            <div class="actions">
              <a
                class="button secondary"
                href={`${base}/qr-image?${query("svg", true)}`}
                data-qr-download="svg"
              >
                Download SVG
              </a>
              <a
                class="button secondary"
                href={`${base}/qr-image?${query("png", true)}`}
                data-qr-download="png"
              >
                Download PNG
              </a>
            </div>
          )}
        </section>
      </div>
      <script src={assetUrl("editor.js")} defer></script>
    </Layout>
  );
}
