//! Scratch (not committed): prints the IR calls and types of a file.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let src = std::fs::read(&path).unwrap();
    let f = frontend::parse(&src);
    for e in &f.parse_errors {
        println!("ERR {}:{} {}", e.span.line, e.span.column, e.message);
    }
    for t in &f.types {
        println!(
            "TYPE {:?} {} ({}) tp={:?} bases={:?} fields={:?} methods={:?} alias={:?}",
            t.kind,
            t.qualified_name,
            t.name,
            t.template_params,
            t.bases,
            t.fields
                .iter()
                .map(|x| format!("{}:{}", x.name, x.type_text))
                .collect::<Vec<_>>(),
            t.methods,
            t.aliased
        );
    }
    for fun in &f.functions {
        println!(
            "FN {} [{}] id={} kind={:?} line={} class={:?} tp={:?} unseen={:?} exp={:?}",
            fun.name,
            fun.qualified_name,
            fun.id,
            fun.kind,
            fun.name_span.line,
            fun.class_name,
            fun.template_params,
            fun.unseen_specifiers,
            fun.expansion.as_ref().map(|e| (&e.name, e.body_in_macro))
        );
        for l in &fun.loops {
            println!(
                "   LOOP {} line {} pragma={:?}",
                l.index,
                l.keyword.line,
                l.pragma.as_ref().map(|p| (p.hint, &p.macro_name))
            );
        }
        for c in &fun.calls {
            println!(
                "   CALL {:?} {} q={:?} recv={:?} rt={:?} targs={:?} line {}",
                c.form,
                c.callee,
                c.qualifier,
                c.receiver,
                c.receiver_type,
                c.template_args,
                c.span.line
            );
        }
        for d in &fun.decls {
            println!(
                "   DECL {} : {} init_type={:?}",
                d.name, d.type_text, d.init_type
            );
        }
    }
}
