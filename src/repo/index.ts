/**
 * Repositories for repo-level suites: where a repository comes from (a local mirror or
 * GitHub), a work tree at a base commit with no future, and the check that proves it.
 */
export {
  checkoutNoFuture,
  cachedCheckout,
  cutFuture,
  type Checkout,
  type CheckoutOptions,
  type CachedCheckoutOptions,
} from './workspace.ts';
export { findFuture, assertNoFuture, type FutureReport } from './future.ts';
export { repoSource, locateMirror, mirrorCandidates, isGitRepository, checkRepoName, REPO_NAME, type RepoSourceOptions } from './source.ts';
export { absentFiles, extractTree } from './absent.ts';
export { runGit, git, FULL_SHA, type GitResult, type GitOptions } from './git.ts';
