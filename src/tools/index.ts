import { createFileTool } from './create_file.ts';
import { editFileTool } from './edit_file.ts';
import { endEpisodeTool } from './end_episode.ts';
import { findFilesTool } from './find_files.ts';
import { forkEpisodeTool } from './fork_episode.ts';
import { getDiffTool } from './get_diff.ts';
import { insertLinesTool } from './insert_lines.ts';
import { listDirTool } from './list_dir.ts';
import { listSuitesTool } from './list_suites.ts';
import { listTasksTool } from './list_tasks.ts';
import { runCommandTool } from './run_command.ts';
import { runTestsTool } from './run_tests.ts';
import { searchTool } from './search.ts';
import { startEpisodeTool } from './start_episode.ts';
import { submitTool } from './submit.ts';
import { undoEditTool } from './undo_edit.ts';
import { viewErrorLogTool } from './view_error_log.ts';
import { viewFileTool } from './view_file.ts';
import type { AnyTool, EpisodeTool, GymTool } from './types.ts';

export const GYM_TOOLS: GymTool[] = [listSuitesTool, listTasksTool, startEpisodeTool];

/** The core episode tools, offered in every episode; a suite adds its own (Suite.tools). */
export const EPISODE_TOOLS: EpisodeTool[] = [
  viewFileTool,
  editFileTool,
  insertLinesTool,
  createFileTool,
  undoEditTool,
  listDirTool,
  findFilesTool,
  searchTool,
  runCommandTool,
  runTestsTool,
  viewErrorLogTool,
  getDiffTool,
  submitTool,
  endEpisodeTool,
  forkEpisodeTool,
];

export type { AnyTool, EpisodeTool, GymTool, ToolContext, ToolResult } from './types.ts';
