// Citeaudit's own script: keyboard shortcuts and review helpers (no inline scripts: CSP).
"use strict";
