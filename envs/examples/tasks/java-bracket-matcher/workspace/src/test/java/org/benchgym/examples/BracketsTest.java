package org.benchgym.examples;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BracketsTest {

    @Test
    void simplePairsAreBalanced() {
        assertTrue(Brackets.isBalanced("()"));
        assertTrue(Brackets.isBalanced("[]"));
        assertTrue(Brackets.isBalanced("{}"));
    }

    @Test
    void nestedBracketsAreBalanced() {
        assertTrue(Brackets.isBalanced("{[()]}"));
        assertTrue(Brackets.isBalanced("([]{})"));
    }

    @Test
    void unclosedBracketIsNotBalanced() {
        assertFalse(Brackets.isBalanced("(()"));
    }

    @Test
    void crossedBracketsAreNotBalanced() {
        assertFalse(Brackets.isBalanced("([)]"));
    }
}
