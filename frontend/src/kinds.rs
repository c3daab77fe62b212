//! Grammar node kinds the lowering cares about, mapped once from tree-sitter kind ids to an enum.
//!
//! Matching on `u16` ids through a table is much cheaper than comparing kind strings on every
//! node, and it is the only place that spells grammar node names for the walker.

use tree_sitter::Language;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum K {
    Other,
    FunctionDefinition,
    TemplateDeclaration,
    NamespaceDefinition,
    ClassSpecifier,
    LinkageSpecification,
    ForStatement,
    ForRangeLoop,
    WhileStatement,
    DoStatement,
    SwitchStatement,
    CallExpression,
    LambdaExpression,
    BreakStatement,
    ContinueStatement,
    ReturnStatement,
    GotoStatement,
    LabeledStatement,
    Declaration,
    FieldDeclaration,
    InitDeclarator,
    Identifier,
    TypeIdentifier,
    FieldIdentifier,
    NumberLiteral,
    Comment,
    StringLike,
    PreprocCall,
    PreprocDef,
    PreprocFunctionDef,
    BinaryExpression,
    AssignmentExpression,
    UpdateExpression,
    PointerExpression,
    CompoundStatement,
    Error,
}

/// `table[kind_id]` is the [`K`] of that node kind.
pub(crate) struct Kinds {
    table: Vec<K>,
}

impl Kinds {
    pub(crate) fn new(lang: &Language) -> Self {
        let n = lang.node_kind_count();
        let mut table = vec![K::Other; n + 1];
        for (id, slot) in table.iter_mut().enumerate().take(n) {
            let Some(name) = lang.node_kind_for_id(id as u16) else { continue };
            *slot = match name {
                "function_definition" => K::FunctionDefinition,
                "template_declaration" => K::TemplateDeclaration,
                "namespace_definition" => K::NamespaceDefinition,
                "class_specifier" | "struct_specifier" | "union_specifier" => K::ClassSpecifier,
                "linkage_specification" => K::LinkageSpecification,
                "for_statement" => K::ForStatement,
                "for_range_loop" => K::ForRangeLoop,
                "while_statement" => K::WhileStatement,
                "do_statement" => K::DoStatement,
                "switch_statement" => K::SwitchStatement,
                "call_expression" => K::CallExpression,
                "lambda_expression" => K::LambdaExpression,
                "break_statement" => K::BreakStatement,
                "continue_statement" => K::ContinueStatement,
                "return_statement" => K::ReturnStatement,
                "goto_statement" => K::GotoStatement,
                "labeled_statement" => K::LabeledStatement,
                "declaration" => K::Declaration,
                "field_declaration" => K::FieldDeclaration,
                "init_declarator" => K::InitDeclarator,
                "identifier" => K::Identifier,
                "type_identifier" => K::TypeIdentifier,
                "field_identifier" => K::FieldIdentifier,
                "number_literal" => K::NumberLiteral,
                "comment" => K::Comment,
                "string_literal" | "char_literal" | "raw_string_literal" | "system_lib_string"
                | "concatenated_string" => K::StringLike,
                "preproc_call" => K::PreprocCall,
                "preproc_def" => K::PreprocDef,
                "preproc_function_def" => K::PreprocFunctionDef,
                "binary_expression" => K::BinaryExpression,
                "assignment_expression" => K::AssignmentExpression,
                "update_expression" => K::UpdateExpression,
                "pointer_expression" => K::PointerExpression,
                "compound_statement" => K::CompoundStatement,
                "ERROR" => K::Error,
                _ => K::Other,
            };
        }
        Kinds { table }
    }

    #[inline]
    pub(crate) fn of(&self, id: u16) -> K {
        if id == u16::MAX {
            return K::Error; // ts_builtin_sym_error
        }
        self.table.get(id as usize).copied().unwrap_or(K::Other)
    }
}
