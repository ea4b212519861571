/**
 * Telemetry as §4's `telemetry` block names it: per phase duration_ms, input_size, output_size
 * and status; per loop iteration_count, closure_rate and kappa_distribution. Aggregates only
 * (counts, sums, min/max, fixed buckets): nothing is kept per phase execution, so memory stays
 * flat however long a loop runs.
 */
export interface PhaseStats {
  count: number;
  statuses: Record<string, number>;
  duration_ms: { sum: number; min: number; max: number; mean: number };
  input_size?: { sum: number; max: number; mean: number };
  output_size?: { sum: number; max: number; mean: number };
}

export interface LoopTelemetry {
  namespace: string;
  iteration_count: number;
  closed_count: number;
  /** Iterations that reached the closure ÷ iterations finished (§13: the loop closure rate). */
  closure_rate: number;
  iteration_statuses: Record<string, number>;
  /** max_kappa values seen by route phases, in buckets 0, (0,1], (1,2], (2,4], >4. */
  kappa_distribution: Record<string, number>;
  phases: Record<string, PhaseStats>;
}

class PhaseAccumulator {
  count = 0;
  statuses: Record<string, number> = {};
  durSum = 0;
  durMin = Infinity;
  durMax = 0;
  inSum = 0;
  inMax = 0;
  outSum = 0;
  outMax = 0;
}

const KAPPA_BUCKETS = ["0", "0-1", "1-2", "2-4", ">4"] as const;

function kappaBucket(k: number): (typeof KAPPA_BUCKETS)[number] {
  if (k <= 0) return "0";
  if (k <= 1) return "0-1";
  if (k <= 2) return "1-2";
  if (k <= 4) return "2-4";
  return ">4";
}

export class TelemetryRecorder {
  private readonly phases = new Map<string, PhaseAccumulator>();
  private iterations = 0;
  private closed = 0;
  private readonly iterationStatuses: Record<string, number> = {};
  private readonly kappa: Record<string, number> = Object.fromEntries(KAPPA_BUCKETS.map((b) => [b, 0]));

  constructor(
    readonly namespace: string,
    /** Sizes cost a serialisation: measured only when the manifest asks for them. */
    readonly measureSizes: boolean,
  ) {}

  phase(phaseId: string, status: string, durationMs: number, inputSize?: number, outputSize?: number): void {
    let acc = this.phases.get(phaseId);
    if (!acc) {
      acc = new PhaseAccumulator();
      this.phases.set(phaseId, acc);
    }
    acc.count++;
    acc.statuses[status] = (acc.statuses[status] ?? 0) + 1;
    acc.durSum += durationMs;
    if (durationMs < acc.durMin) acc.durMin = durationMs;
    if (durationMs > acc.durMax) acc.durMax = durationMs;
    if (inputSize !== undefined) {
      acc.inSum += inputSize;
      if (inputSize > acc.inMax) acc.inMax = inputSize;
    }
    if (outputSize !== undefined) {
      acc.outSum += outputSize;
      if (outputSize > acc.outMax) acc.outMax = outputSize;
    }
  }

  iteration(status: string, closed: boolean): void {
    this.iterations++;
    if (closed) this.closed++;
    this.iterationStatuses[status] = (this.iterationStatuses[status] ?? 0) + 1;
  }

  /**
   * An iteration counted as `from` turned out otherwise once the store answered (in-doubt.ts):
   * counted as `to` instead, or not at all (it continues as another run, which counts itself).
   */
  recount(from: string, to: string | undefined, closed: boolean): void {
    if (!this.iterationStatuses[from]) return;
    this.iterationStatuses[from]--;
    if (this.iterationStatuses[from] === 0) delete this.iterationStatuses[from];
    if (to !== undefined) this.iterationStatuses[to] = (this.iterationStatuses[to] ?? 0) + 1;
    else {
      this.iterations--;
      if (closed) this.closed--;
    }
  }

  kappaSeen(maxKappa: number): void {
    this.kappa[kappaBucket(maxKappa)]!++;
  }

  snapshot(): LoopTelemetry {
    const phases: Record<string, PhaseStats> = {};
    for (const [id, a] of this.phases) {
      const stats: PhaseStats = {
        count: a.count,
        statuses: { ...a.statuses },
        duration_ms: { sum: a.durSum, min: a.count ? a.durMin : 0, max: a.durMax, mean: a.count ? a.durSum / a.count : 0 },
      };
      if (this.measureSizes) {
        stats.input_size = { sum: a.inSum, max: a.inMax, mean: a.count ? a.inSum / a.count : 0 };
        stats.output_size = { sum: a.outSum, max: a.outMax, mean: a.count ? a.outSum / a.count : 0 };
      }
      phases[id] = stats;
    }
    return {
      namespace: this.namespace,
      iteration_count: this.iterations,
      closed_count: this.closed,
      closure_rate: this.iterations ? this.closed / this.iterations : 0,
      iteration_statuses: { ...this.iterationStatuses },
      kappa_distribution: { ...this.kappa },
      phases,
    };
  }
}
