import type { Catalogue } from '../../catalogue/catalogue.js';
import type { ProviderConfig } from '../../config/provider-config.js';
import { hasData, importLinesOf, type CachedAnswerReader } from '../../datasets/export/answer-lines.js';
import { RecordValidator } from '../../datasets/import/record-validator.js';
import { PAID_UPSTREAM_NAMES } from '../../datasets/kept-per-operation.js';
import type { Clock } from '../../shared/clock.js';
import { PAID_ANSWER_READERS } from '../paid-answers.js';
import { AnswerRecorder, type RecorderLog } from './answer-recorder.js';
import type { FetchOutcome } from './upstream-source.js';

/**
 * Where a paid upstream's client reports each answer it fetched (`<NAME>_RECORD_FILE`): the cache
 * key and payload as its upstream cache keeps them, and the operation the call was made for. Told
 * once per upstream call (concurrent lookups that share a call share the telling), never for a
 * cache hit; it must not throw.
 */
export interface AnswerSink {
  fetched(cacheKey: string, payload: unknown, operation: string): void;
}

/** The sink of each paid upstream that records, by provider name (UpstreamDeps.recordings). */
export interface AnswerSinks {
  of(provider: string): AnswerSink | undefined;
}

/**
 * `fetch` of one lookup, telling `sink` of a found answer before the source caches it. Wrapped
 * around the fetch that UpstreamSource.lookup runs, so single flight and the cache decide how
 * often it runs: once per upstream call. Without a sink it is `fetch` itself.
 */
export function recordedFetch(fetch: () => Promise<FetchOutcome>, sink: AnswerSink | undefined, cacheKey: string, operation: string): () => Promise<FetchOutcome> {
  if (!sink) return fetch;
  return async () => {
    const outcome = await fetch();
    if (outcome.status === 'found') sink.fetched(cacheKey, outcome.payload, operation);
    return outcome;
  };
}

/**
 * One paid upstream's record file: each answer it fetched, read by its CachedAnswerReader (the
 * one `export --source` uses) into the record the lookup served, appended as import lines
 * (`source` the provider's name, `fetchedAt` now) when it has data (an empty list is served free
 * and not recorded). A line the import would refuse is left out with a warning, so the file
 * always imports cleanly.
 */
export class AnswerRecording implements AnswerSink {
  private readonly validator: RecordValidator;

  constructor(
    private readonly recorder: AnswerRecorder,
    private readonly source: string,
    private readonly read: CachedAnswerReader,
    private readonly catalogue: Catalogue,
    private readonly clock: Clock,
    private readonly log?: RecorderLog,
  ) {
    this.validator = new RecordValidator(catalogue);
  }

  /** The file this process writes. */
  get path(): string {
    return this.recorder.path;
  }

  fetched(cacheKey: string, payload: unknown, operation: string): void {
    try {
      const fetchedAt = this.clock.now().toISOString();
      for (const answered of this.read(cacheKey, payload, operation)) {
        const op = this.catalogue.find(answered.operation);
        if (!op || !hasData(op, answered.record)) continue;
        for (const line of importLinesOf(answered, op, this.source, fetchedAt)) {
          const checked = this.validator.validate(line);
          if (checked.ok) this.recorder.append(line);
          else this.log?.warn(`a ${this.source} answer to ${op.name} was not recorded: the import would refuse it (${checked.reason})`);
        }
      }
    } catch (error) {
      // A record is never worth failing the lookup it came with.
      this.log?.warn(`a ${this.source} answer could not be recorded`, error);
    }
  }

  close(): void {
    this.recorder.close();
  }
}

export interface AnswerRecordingsDeps {
  readonly catalogue: Catalogue;
  readonly clock: Clock;
  /** Where a line that could not be written is reported (the server's logger). */
  readonly log?: RecorderLog;
}

/**
 * The record files of every paid upstream that has one (`<NAME>_RECORD_FILE`; issue 24 for the
 * original, issue 32 for the others), opened by the server at start and closed when it stops.
 * The CLI opens none: a command's lookups are never recorded.
 */
export class AnswerRecordings implements AnswerSinks {
  private constructor(private readonly byProvider: ReadonlyMap<string, AnswerRecording>) {}

  static open(config: ProviderConfig, deps: AnswerRecordingsDeps): AnswerRecordings {
    const byProvider = new Map<string, AnswerRecording>();
    for (const name of PAID_UPSTREAM_NAMES) {
      const paid = config[name]?.paid;
      if (paid?.recordFile === undefined) continue;
      byProvider.set(paid.name, new AnswerRecording(new AnswerRecorder(paid.recordFile, deps.log), paid.name, PAID_ANSWER_READERS[name], deps.catalogue, deps.clock, deps.log));
    }
    return new AnswerRecordings(byProvider);
  }

  of(provider: string): AnswerRecording | undefined {
    return this.byProvider.get(provider);
  }

  close(): void {
    for (const recording of this.byProvider.values()) recording.close();
  }
}
