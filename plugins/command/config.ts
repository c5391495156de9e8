/**
 * Config of the `command` provider: a local program (a CLI agent, a script,
 * `ollama run`, …) that reads the prompt on standard input and answers on
 * standard output.
 */
import { Type, type Static } from 'hook-intake/plugin';

export const CommandConfig = Type.Object(
  {
    type: Type.Literal('command'),
    command: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: 'argv, no shell; {model}, {sessionKey}, {runId}, {thinking} are replaced in each item',
    }),
    cwd: Type.Optional(Type.String({ minLength: 1, description: 'working directory, relative to the config file' })),
    env: Type.Optional(Type.Record(Type.String(), Type.String(), { propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } })),
    inheritEnv: Type.Boolean({ default: true, description: "pass the service's own environment to the program" }),
    input: Type.Union([Type.Literal('transcript'), Type.Literal('message'), Type.Literal('json')], { default: 'transcript' }),
    maxOutputBytes: Type.Integer({ default: 1024 * 1024, minimum: 1 }),
    killGraceMs: Type.Integer({ default: 2000, minimum: 0, maximum: 60_000, description: 'between SIGTERM and SIGKILL' }),
  },
  { additionalProperties: false },
);

export type CommandConfigValue = Static<typeof CommandConfig>;
