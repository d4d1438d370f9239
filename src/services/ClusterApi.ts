/**
 * The HTTP API of a cluster runner (docs/cluster.md): `parley serve`'s API
 * (`ServeApi.ts`, the same routes on every runner, so a load balancer may
 * send any request to any runner) plus `GET /api/cluster`, the runners and
 * how many conversations each runs.
 *
 * @example
 * ```ts
 * import { ClusterApi } from "parley/services/ClusterApi"
 * // HttpApiBuilder.layer(ClusterApi, { openapiPath: "/api/openapi.json" })
 * ```
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { ServeApi, Token } from "./ServeApi.ts"

/** One runner of the cluster. */
export const RunnerRow = Schema.Struct({
  /** `host:port` of its runner protocol (what other runners connect to). */
  address: Schema.String,
  healthy: Schema.Boolean,
  last_heartbeat: Schema.NullOr(Schema.String),
  /** The shards it holds now. */
  shards: Schema.Number,
  /** The conversations whose turn it runs now. */
  conversations: Schema.Number
})
export type RunnerRow = typeof RunnerRow.Type

/** `GET /api/cluster`: this runner's address and every runner. */
export const ClusterInfo = Schema.Struct({ runner: Schema.String, runners: Schema.Array(RunnerRow) })

export class ClusterGroup extends HttpApiGroup.make("cluster")
  .add(
    HttpApiEndpoint.get("cluster", "/cluster", { success: ClusterInfo }).annotate(
      OpenApi.Summary,
      "List the runners of the cluster"
    )
  )
  .middleware(Token)
  .prefix("/api")
  .annotate(OpenApi.Description, "The cluster's runners") {}

export const ClusterApi = ServeApi.add(ClusterGroup)
