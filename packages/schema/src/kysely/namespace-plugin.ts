import {
  IdentifierNode,
  type KyselyPlugin,
  OperationNodeTransformer,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type SchemableIdentifierNode,
  type UnknownRow,
} from 'kysely'
import type { Namespace } from '../namespace/namespace.js'
import { TABLE_NAMES } from '../tables/iddqueue-database.js'

const LOGICAL_TABLES: ReadonlySet<string> = new Set(TABLE_NAMES)

class NamespaceTransformer extends OperationNodeTransformer {
  constructor(private readonly ns: Namespace) {
    super()
  }

  protected override transformSchemableIdentifier(
    node: SchemableIdentifierNode,
    queryId?: QueryId,
  ): SchemableIdentifierNode {
    const transformed = super.transformSchemableIdentifier(node, queryId)
    // Only logical iddqueue table names are mapped; iddqueue never names a CTE
    // after one of its tables, so anything else passes through untouched.
    if (transformed.schema || !LOGICAL_TABLES.has(transformed.identifier.name)) return transformed
    return {
      ...transformed,
      schema: IdentifierNode.create(this.ns.schema),
      identifier: IdentifierNode.create(this.ns.prefix + transformed.identifier.name),
    }
  }
}

/**
 * A Kysely plugin that maps iddqueue's logical table names (`messages`,
 * `workers`, ...) to the namespace's schema and prefix.
 *
 * @example
 * const db = new Kysely<IddqueueDatabase>({ dialect }).withPlugin(new NamespacePlugin(namespace({ prefix: 'app_' })))
 * db.selectFrom('messages').selectAll().compile().sql // select * from "iddqueue"."app_messages"
 */
export class NamespacePlugin implements KyselyPlugin {
  readonly #transformer: NamespaceTransformer

  constructor(ns: Namespace) {
    this.#transformer = new NamespaceTransformer(ns)
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node, args.queryId)
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result
  }
}
