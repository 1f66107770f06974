import { Layout } from "../layout.tsx";
import type { Session } from "../../services/access/sessions.ts";
import { BASE } from "../security.ts";

export function ErrorPage(props: { status: number; message: string; session?: Session }) {
  const title = props.status === 404
    ? "Not found"
    : props.status >= 500
    ? "Something went wrong"
    : "That did not work";
  return (
    <Layout title={title} session={props.session}>
      <div class="card">
        <h1>{title}</h1>
        <p>{props.message}</p>
        <p>
          <a href={BASE}>Back to your projects</a>
        </p>
      </div>
    </Layout>
  );
}
