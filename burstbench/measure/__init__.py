"""One point measured: driven burst by burst or sustained, its records turned into metrics and
accounting, its result file written; the searches and references built on points."""
