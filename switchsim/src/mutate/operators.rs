//! The mutants of one RTL file: every single-point change of the catalogue
//! ([`mutants`]) and how one is applied ([`apply`]).
//!
//! Catalogue (applied outside comments, declarations and the
//! `ifndef SYNTHESIS` assertion blocks):
//!
//! | op | change |
//! |---|---|
//! | `rel` | `<` `<=` `>` `>=` `==` `!=` swapped with their off-by-one / negated form |
//! | `arith` | `+` <-> `-` (outside bit ranges) |
//! | `logic` | `&&` <-> `||`, `&` <-> `|`, `^` -> `&` |
//! | `not` | a `!` or `~` removed |
//! | `const` | `1'b0` <-> `1'b1`; a sized decimal `N'dK` -> `K+1` (or `K-1`) |
//! | `reset` | one register assignment removed from a reset branch (register no longer reset) |
//! | `stuck` | the right-hand side of an `assign` replaced by zero |
//! | `ternary` | the two arms of a `? :` swapped |

/// One single-point mutation.
#[derive(Clone, Debug)]
pub struct Mutant {
    /// `line:col:op`.
    pub id: String,
    /// 1-based line.
    pub line: usize,
    /// The operator (see the catalogue).
    pub op: &'static str,
    /// The original text of the line.
    pub before: String,
    /// The mutated line.
    pub after: String,
}

/// Lines that may be mutated: not comments, declarations or assertions.
fn mutable_lines(text: &str) -> Vec<bool> {
    let mut ok = Vec::new();
    let mut in_assert = 0i32;
    let mut in_header = true;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("`ifndef SYNTHESIS") {
            in_assert += 1;
        }
        let decl = t.starts_with("//")
            || t.starts_with("input")
            || t.starts_with("output")
            || t.starts_with("parameter")
            || t.starts_with("localparam")
            || t.starts_with("reg ")
            || t.starts_with("wire ") && !t.contains('=')
            || t.starts_with("integer")
            || t.starts_with("module")
            || t.starts_with('`')
            || t.starts_with("function")
            || t.is_empty();
        if t.starts_with(");") {
            in_header = false;
        }
        ok.push(!decl && in_assert == 0 && !in_header);
        if in_assert > 0 && t.starts_with("`endif") {
            in_assert -= 1;
        }
    }
    ok
}

/// Byte ranges of `line` inside `[...]` (bit ranges and part selects).
fn in_brackets(line: &str) -> Vec<bool> {
    let mut depth = 0;
    line.chars()
        .map(|c| {
            if c == '[' {
                depth += 1;
            }
            let r = depth > 0;
            if c == ']' {
                depth -= 1;
            }
            r
        })
        .collect()
}

/// Characters of `line` inside a replication count `{(...){`, whose
/// arithmetic only sizes zero padding (mutating it changes no value).
fn in_replication_count(line: &str) -> Vec<bool> {
    let c: Vec<char> = line.chars().collect();
    let mut r = vec![false; c.len()];
    for i in 0..c.len() {
        if c[i] == '(' && i > 0 && c[i - 1] == '{' {
            let mut depth = 0;
            for j in i..c.len() {
                match c[j] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            if c.get(j + 1) == Some(&'{') {
                                r[i..=j].fill(true);
                            }
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    r
}

/// The code part of a line (before a `//` comment).
fn code_len(line: &str) -> usize {
    line.find("//").unwrap_or(line.len())
}

/// Every mutant of `text` (the catalogue in the module doc).
pub fn mutants(text: &str) -> Vec<Mutant> {
    let lines: Vec<&str> = text.lines().collect();
    let ok = mutable_lines(text);
    let mut v = Vec::new();
    let mut push = |ln: usize, col: usize, op: &'static str, after: String| {
        v.push(Mutant {
            id: format!("{}:{}:{op}", ln + 1, col + 1),
            line: ln + 1,
            op,
            before: lines[ln].to_string(),
            after,
        });
    };
    // Reset branches: `if (!rst_ni) begin ... end`.
    let mut in_reset = false;
    for (ln, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.contains("if (!rst_ni)") && t.ends_with("begin") {
            in_reset = true;
            continue;
        }
        if in_reset {
            if t.starts_with("end") {
                in_reset = false;
            } else if t.contains("<=") && ok[ln] {
                push(
                    ln,
                    0,
                    "reset",
                    format!("{}// reset removed", " ".repeat(line.len() - t.len())),
                );
            }
            continue;
        }
        if !ok[ln] {
            continue;
        }
        let code = &line[..code_len(line)];
        let br: Vec<bool> = in_brackets(code)
            .into_iter()
            .zip(in_replication_count(code))
            .map(|(a, b)| a || b)
            .collect();
        let chars: Vec<char> = code.chars().collect();
        let n = chars.len();
        // Nonblocking assignment `lhs <= rhs`: the first `<=` of a statement.
        let nb = {
            let s = code.trim_start();
            let first = s.split(['(', '?']).next().unwrap_or("");
            if first.contains("<=") && !s.starts_with("if") && !s.starts_with("assign") {
                code.find("<=")
            } else {
                None
            }
        };
        let repl = |i: usize, len: usize, new: &str| -> String {
            let b: String = chars[..i].iter().collect();
            let a: String = chars[i + len..].iter().collect();
            format!("{b}{new}{a}")
        };
        let mut i = 0;
        while i < n {
            let c = chars[i];
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            let prev = if i > 0 { chars[i - 1] } else { ' ' };
            if br[i] {
                i += 1;
                continue;
            }
            match c {
                '<' | '>' if prev != '<' && prev != '>' && next != c => {
                    if next == '=' {
                        if Some(i) != nb {
                            push(ln, i, "rel", repl(i, 2, &c.to_string()));
                        }
                        i += 2;
                        continue;
                    } else {
                        push(ln, i, "rel", repl(i, 1, &format!("{c}=")));
                    }
                }
                '=' if next == '=' && prev != '=' && prev != '!' && prev != '<' && prev != '>' => {
                    push(ln, i, "rel", repl(i, 2, "!="));
                    i += 2;
                    continue;
                }
                '!' if next == '=' => {
                    push(ln, i, "rel", repl(i, 2, "=="));
                    i += 2;
                    continue;
                }
                '!' | '~' => push(ln, i, "not", repl(i, 1, "")),
                '+' if next != ':' && prev != '+' => push(ln, i, "arith", repl(i, 1, "-")),
                '-' if next != ':' && prev != '-' && prev != '\'' => {
                    push(ln, i, "arith", repl(i, 1, "+"))
                }
                '&' if next == '&' => {
                    push(ln, i, "logic", repl(i, 2, "||"));
                    i += 2;
                    continue;
                }
                '|' if next == '|' => {
                    push(ln, i, "logic", repl(i, 2, "&&"));
                    i += 2;
                    continue;
                }
                '&' => push(ln, i, "logic", repl(i, 1, "|")),
                '|' => push(ln, i, "logic", repl(i, 1, "&")),
                '^' if prev != '(' && prev != '{' && prev != ' '
                    || (prev == ' ' && next == ' ') =>
                {
                    push(ln, i, "logic", repl(i, 1, "&"))
                }
                '?' => {
                    // cond ? a : b  ->  cond ? b : a (when both arms are on
                    // this line). Each arm ends where its brackets close:
                    // the else arm at `;`, at a `,` outside brackets or at
                    // the bracket that encloses the whole `? :`, so that
                    // `(c ? a : b) ^ d` swaps inside its parentheses.
                    let rest: String = chars[i + 1..].iter().collect();
                    if let Some(colon) = rest.find(" : ") {
                        let a = rest[..colon].trim();
                        let tail = &rest[colon + 3..];
                        let end = arm_end(tail);
                        let b = tail[..end].trim();
                        if !a.is_empty()
                            && !b.is_empty()
                            && arm_end(a) == a.len()
                            && !a.contains('?')
                            && !b.contains('?')
                            && !b.contains(':')
                        {
                            let head: String = chars[..=i].iter().collect();
                            push(
                                ln,
                                i,
                                "ternary",
                                format!("{head} {b} : {a}{}", &tail[end..]),
                            );
                        }
                    }
                }
                '\'' => {
                    // Sized literals: N'bV and N'dK.
                    let rest: String = chars[i + 1..].iter().collect();
                    let size: String = chars[..i]
                        .iter()
                        .rev()
                        .take_while(|c| c.is_ascii_digit())
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    if rest.starts_with("b0") || rest.starts_with("b1") {
                        if size == "1" && !rest[2..].starts_with(['0', '1']) {
                            let flip = if rest.starts_with("b0") { "b1" } else { "b0" };
                            push(ln, i, "const", repl(i + 1, 2, flip));
                        }
                    } else if let Some(d) = rest.strip_prefix('d') {
                        let digits: String = d.chars().take_while(|c| c.is_ascii_digit()).collect();
                        if let (Ok(k), Ok(w)) = (digits.parse::<u64>(), size.parse::<u32>()) {
                            let max = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                            let k2 = if k < max { k + 1 } else { k - 1 };
                            push(ln, i, "const", repl(i + 2, digits.len(), &k2.to_string()));
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        // Stuck-at zero: `assign x = ...;` -> `assign x = '0;`
        let t = code.trim_start();
        if t.starts_with("assign ") {
            if let (Some(eq), Some(semi)) = (code.find('='), code.rfind(';')) {
                if eq < semi {
                    push(ln, eq, "stuck", format!("{}= '0;", &code[..eq]));
                }
            }
        }
    }
    // Drop mutants that do not change the line (e.g. overlapping patterns).
    v.retain(|m| m.after != m.before && !m.after.trim().is_empty() || m.op == "reset");
    v
}

/// Applies `m` to `text`.
pub fn apply(text: &str, m: &Mutant) -> String {
    let mut out: Vec<&str> = text.lines().collect();
    out[m.line - 1] = &m.after;
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// Where an arm of `? :` starting at `s` ends: at a `;`, at a `,` outside
/// brackets, or at the closing bracket of a bracket opened before it (the
/// length of `s` when none).
fn arm_end(s: &str) -> usize {
    let mut depth = 0i32;
    for (k, c) in s.char_indices() {
        match c {
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' if depth == 0 => return k,
            ')' | '}' | ']' => depth -= 1,
            ';' => return k,
            ',' if depth == 0 => return k,
            _ => {}
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ternary_swap_stays_inside_its_brackets() {
        // (Lines before the end of a module header, `);`, are not mutated.)
        let src = ");\n    if (en_i) state_d = (state_d >> 1) ^ (state_d[0] ? T : {W{1'b0}});\n";
        let t: Vec<Mutant> = mutants(src)
            .into_iter()
            .filter(|m| m.op == "ternary")
            .collect();
        assert_eq!(t.len(), 1);
        assert_eq!(
            t[0].after.trim(),
            "if (en_i) state_d = (state_d >> 1) ^ (state_d[0] ? {W{1'b0}} : T);"
        );
        let src = ");\n  assign y = f(a ? b : c, d);\n";
        let t: Vec<Mutant> = mutants(src)
            .into_iter()
            .filter(|m| m.op == "ternary")
            .collect();
        assert_eq!(t[0].after.trim(), "assign y = f(a ? c : b, d);");
    }

    /// No ternary swap in any block's RTL moves a bracket across its `:`
    /// (such swaps, e.g. `(c ? {x}) : y`, were syntax errors: stillborn,
    /// not counted): the swapped-in then-arm closes every bracket it opens.
    #[test]
    fn every_ternary_swap_keeps_the_brackets_balanced() {
        let rtl = cosim::golden::default_rtl_dir();
        let bal = |m: &Mutant| {
            let col = m.id.split(':').nth(1).unwrap().parse::<usize>().unwrap();
            let after = &m.after[col..];
            let then = &after[..after.find(" : ").unwrap()];
            arm_end(then) == then.len()
                && ['(', '{', '['].map(|o| then.matches(o).count())
                    == [')', '}', ']'].map(|c| then.matches(c).count())
        };
        let mut n = 0;
        for e in std::fs::read_dir(&rtl).unwrap() {
            let path = e.unwrap().path();
            let src = std::fs::read_to_string(&path).unwrap();
            for m in mutants(&src).into_iter().filter(|m| m.op == "ternary") {
                n += 1;
                assert!(
                    bal(&m),
                    "{} {}: `{}` -> `{}`",
                    path.display(),
                    m.id,
                    m.before.trim(),
                    m.after.trim()
                );
            }
        }
        assert!(n > 10, "only {n} ternary mutants");
    }
}
