package org.benchgym.examples;

/** Utilities for checking bracket structure in text. */
public final class Brackets {

    private Brackets() {
    }

    /**
     * Returns whether the brackets in {@code s} are balanced.
     *
     * <p>Three kinds of brackets are recognised: {@code ()}, {@code []} and {@code {}}. The
     * brackets in {@code s} are balanced if every opening bracket is closed by a closing bracket of
     * the same kind, brackets are closed in the reverse order in which they were opened (so
     * {@code "([)]"} is not balanced), and there is no closing bracket without a matching opening
     * bracket before it. Every other character, including {@code <} and {@code >}, is ignored. The
     * empty string and strings without brackets are balanced.
     *
     * <p>The check must work for arbitrarily long inputs and arbitrarily deep nesting (for example
     * a million opening brackets followed by a million closing ones).
     *
     * @param s the text to check
     * @return {@code true} if the brackets in {@code s} are balanced
     * @throws NullPointerException if {@code s} is {@code null}
     */
    public static boolean isBalanced(String s) {
        throw new UnsupportedOperationException("not implemented yet");
    }
}
