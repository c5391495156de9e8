/**
 * A generation: the immutable snapshot a request reads — validated config, token matchers, plugin
 * instances, compiled pipelines and the transform workers. Built by build.ts, held by ref.ts. This
 * file holds only the type, so that the code a generation is read by does not depend on how it is
 * built.
 */
import type { TokenMatcher } from '../auth/token.ts';
import type { Config } from '../config/schema.ts';
import type { CallbackPlan } from '../callbacks/plan.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import type { AgentProvider, Service } from '../plugins/define.ts';
import type { TransformPool } from '../transforms/pool.ts';
import type { Agents } from './agents.ts';
import type { ChannelEntry, Held } from './instances.ts';

export type { ChannelEntry };

export interface Generation {
  readonly id: number;
  readonly loadedAt: number;
  readonly file: string | undefined;
  readonly config: Config;
  readonly hookToken: TokenMatcher | undefined;
  readonly gatewayToken: TokenMatcher | undefined;
  /** The agents it runs (`agents.list`, or `main` of the defaults), which of them is the default, which may be named. */
  readonly agents: Agents;
  readonly providers: ReadonlyMap<string, AgentProvider>;
  readonly channels: ReadonlyMap<string, ChannelEntry>;
  readonly services: ReadonlyMap<string, Service>;
  /** Every plugin instance it holds (providers, channels, services, verifiers), some shared with other generations. */
  readonly instances: readonly Held[];
  readonly pipelines: readonly Pipeline[];
  /** Header names the mappings take a signature from (`verify.header`): credentials beside the common ones (auth/credential-headers.ts). */
  readonly credentialHeaders: ReadonlySet<string>;
  /** Workers running this generation's transforms; absent when no mapping has one. */
  readonly transforms: TransformPool | undefined;
  readonly warnings: readonly string[];
  /** Files and directories whose changes should trigger a reload. */
  readonly sources: { readonly files: readonly string[]; readonly dirs: readonly string[] };
  /** Mappings that turn the safety boundary off (reported by `check`). */
  readonly unsafeHooks: readonly string[];
  /**
   * Hook names a signature-verified mapping may own (their `match.path`), and
   * whether one matches without a path. For those, the token check waits until
   * the owning mapping is known.
   */
  readonly signed: { readonly paths: ReadonlySet<string>; readonly anyPath: boolean };
  /** Where lifecycle events go (`callbacks`: docs/callbacks.md). */
  readonly callbacks: CallbackPlan;
  /** Starts its plugin instances not started yet: call when it goes live. */
  start(): Promise<void>;
  /** Releases what the generation holds: transform workers, and plugin instances no other generation holds (stopped). */
  dispose(): Promise<void>;
}
