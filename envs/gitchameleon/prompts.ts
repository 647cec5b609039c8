import { ownValue } from '../../src/own.ts';

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
  const extra = ownValue(LIBRARY_INSTRUCTIONS, f.library.toLowerCase());
  return (
    `You are to solve this in python using ${f.library}-${f.version}. Provide a self-contained ` +
    `Python script that solves the following problem in a markdown code block.\n` +
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

/**
 * The system message of the v2 authors' published runs (reference/v2_self_debug, the
 * `messages` of every row: one system text for all problems).
 */
export const V2_CHAT_SYSTEM_PROMPT =
  'You are a skilled Python programmer tasked with solving a coding problem. Your goal is to ' +
  'provide a clear, efficient, and correct solution that meets all the specified requirements.\n\n' +
  'Please provide your solution following these guidelines:\n\n' +
  '1. Use the required library in your solution.\n' +
  '2. Incorporate the provided starter code correctly.\n' +
  '3. Write your solution in Python.\n' +
  '4. Format your solution within a markdown code block.\n' +
  '5. Ensure your code is clean and efficient.\n' +
  '6. Output only the code block and nothing else. Do not add any in-line comments, documentations, references or usage examples.\n' +
  '7. Make sure your code is executable in a non-interactive environment. For example, ' +
  'do not write code which requires building a Django project or deploying a web-app.\n\n' +
  'Example output format:\n\n```python\n# [Your code here, incorporating the starter code]\n```\n\n' +
  'After writing your solution, please review it to ensure all requirements are met and the code is correct and efficient.\n\n' +
  'Here are the key elements for this task: ';

/**
 * The user message of the v2 authors' published runs: tagged sections for the pinned
 * library, the Python version, the problem and the starter code (their numbering, "2."
 * twice, kept). With V2_CHAT_SYSTEM_PROMPT as the system message it is their prompt.
 */
export function chatPrompt(f: PromptFields & { python: string }): string {
  return (
    `1. Required Library:\n<library>\n${f.library}==${f.version}\n</library>\n\n` +
    `2. Python version:\n<python>\n${f.python}\n</python>\n\n` +
    `2. Coding Problem:\n<coding_problem>\n${f.problem}\n</coding_problem>\n\n` +
    `3. Starter Code:\n<starter_code>\n${f.startingCode}\n</starter_code>`
  );
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
