import type { ReportData } from './data.ts';

/** A part of the report a suite adds (`Suite.reportSections`), e.g. a paper's own tables or metric. */
export interface ReportSection {
  /** The section's heading. */
  title: string;
  /**
   * Where it goes: right after the breakdowns by metadata (`after-breakdowns`), or after the
   * core's metric sections (feedback rounds), before infrastructure failures (`after-metrics`,
   * the default). Sections in one place keep the order they are given in.
   */
  placement?: 'after-breakdowns' | 'after-metrics';
  /** The section's Markdown body (no heading), or undefined when it has nothing to say about these runs. */
  markdown(data: ReportData): string | undefined;
  /** The same as HTML (tables, notes; no heading). */
  html(data: ReportData): string | undefined;
}

/** The sections of one placement, in the order given. */
export function sectionsAt(sections: readonly ReportSection[], placement: NonNullable<ReportSection['placement']>): ReportSection[] {
  return sections.filter((s) => (s.placement ?? 'after-metrics') === placement);
}
