/**
 * The prompts of the GitChameleon paper (Islah et al.): the instruct prompt names the
 * library and the version to use and asks for a self-contained script in a markdown block
 * that starts from the starter code (Appendix A.1, Listing 1); doc-prompting inserts the
 * documentation of the function to use before the starter code (same listing); base models
 * get the starter code and continue it (Section 3.2: "the concatenation of the starting code
 * and model's parsed output").
 */

/** The one library-specific sentence the authors' harness adds (utils.py `library_specific_instructions`). */
const LIBRARY_INSTRUCTIONS: Record<string, string> = { gradio: 'Do not launch a gradio interface.' };

export interface PromptFields {
  library: string;
  /** The version installed (after the authors' remaps, as Listing 1 shows torch-1.11.0). */
  version: string;
  problem: string;
  startingCode: string;
}

function head(f: PromptFields): string {
  const extra = LIBRARY_INSTRUCTIONS[f.library.toLowerCase()];
  return (
    `You are to solve this in python using ${f.library}-${f.version}. Provide a self-contained Python script that solves the following problem in a markdown code block.\n` +
    `${f.problem}\n` +
    (extra ? `${extra}\n` : '')
  );
}

function starter(f: PromptFields): string {
  return `Please start with the following markdown code block:\n\`\`\`\n${f.startingCode}\n\`\`\`\n`;
}

/** The instruct prompt (Listing 1 without the documentation). */
export function instructPrompt(f: PromptFields): string {
  return head(f) + starter(f);
}

/** Documentation longer than this (a whole class's page, say) is cut in prompts; view_docs shows the rest. */
export const DOCS_PROMPT_CHARS = 12_000;

/** The doc-prompting form (Listing 1): the documentation of the function to use, then the starter code. */
export function docsPrompt(f: PromptFields, docs: string): string {
  const text = docs.trimEnd();
  const cut = text.length > DOCS_PROMPT_CHARS ? `${text.slice(0, DOCS_PROMPT_CHARS)}\n[...]` : text;
  return `${head(f)}Here is the documentation for the function to be used:\n\`\`\`\n${cut}\n\`\`\`\n\n${starter(f)}`;
}

/** The base-model form: the starter code, which the model continues. */
export function completionPrompt(f: PromptFields): string {
  return f.startingCode;
}

/** What an agent in an episode needs beyond the paper's prompt: where the answer goes and how it is checked. */
export function episodeNote(o: { file: string; visibleTest?: string; timeoutS: number }): string {
  return [
    '',
    `In this workspace, write your solution in \`${o.file}\` (it holds the starter code); it must be a complete, self-contained file.`,
    o.visibleTest
      ? `run_tests runs the visible test \`${o.visibleTest}\`; view_docs shows the documentation of the installed library version.`
      : 'There is no visible test: try your code with run_command; view_docs shows the documentation of the installed library version.',
    `submit scores the file with hidden tests (time limit ${o.timeoutS} s).`,
  ].join('\n');
}
