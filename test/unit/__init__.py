"""Unit tests of the core layers; a package so test names here never collide with test/test_*.py modules."""
