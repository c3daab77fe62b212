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
    /// Other nodes with a `declarator` field (pointer/reference declarators, parameters).
    HasDeclarator,
    /// `x[N]` in a declaration (it has a `declarator` field too).
    ArrayDeclarator,
    /// The `[...]` of a subscript expression.
    SubscriptArgumentList,
    TemplateArgumentList,
    /// `asm volatile("...")`
    GnuAsm,
    /// `T{...}`: a temporary (or a functor temporary's receiver).
    CompoundLiteral,
    /// `typedef T X;`
    TypeDefinition,
    /// `using X = T;`
    AliasDeclaration,
    /// `enum [class] E { ... }`
    EnumSpecifier,
    NamespaceAlias,
    /// `template float f<Op>(...);`, `extern template ...`: an explicit instantiation.
    TemplateInstantiation,
    Error,
}

/// Field ids of the grammar, looked up once (`child_by_field_name` scans names with strcmp).
#[allow(non_snake_case)]
pub(crate) struct Fields {
    /// `declarator` as the `FieldId` that `children_by_field_id` takes.
    pub declarator_nz: std::num::NonZeroU16,
    pub argument: u16,
    pub arguments: u16,
    pub assembly_code: u16,
    pub body: u16,
    pub condition: u16,
    pub declarator: u16,
    pub default_value: u16,
    pub directive: u16,
    pub field: u16,
    pub function: u16,
    pub initializer: u16,
    pub label: u16,
    pub left: u16,
    pub name: u16,
    pub operator: u16,
    pub parameters: u16,
    pub right: u16,
    pub scope: u16,
    pub size: u16,
    pub ty: u16,
    pub update: u16,
    pub value: u16,
}

impl Fields {
    fn new(lang: &Language) -> Self {
        let id = |n: &str| lang.field_id_for_name(n).map_or(u16::MAX, |v| v.get());
        Fields {
            declarator_nz: lang
                .field_id_for_name("declarator")
                .expect("grammar has a declarator field"),
            argument: id("argument"),
            arguments: id("arguments"),
            assembly_code: id("assembly_code"),
            body: id("body"),
            condition: id("condition"),
            declarator: id("declarator"),
            default_value: id("default_value"),
            directive: id("directive"),
            field: id("field"),
            function: id("function"),
            initializer: id("initializer"),
            label: id("label"),
            left: id("left"),
            name: id("name"),
            operator: id("operator"),
            parameters: id("parameters"),
            right: id("right"),
            scope: id("scope"),
            size: id("size"),
            ty: id("type"),
            update: id("update"),
            value: id("value"),
        }
    }
}

static FIELDS: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();

/// The grammar's field ids.
pub(crate) fn fields() -> &'static Fields {
    FIELDS.get_or_init(|| Fields::new(&tree_sitter_cuda::LANGUAGE.into()))
}

/// `table[kind_id]` is the [`K`] of that node kind.
pub(crate) struct Kinds {
    table: Vec<K>,
}

impl K {
    /// `for`, range-`for`, `while` and `do` statements.
    pub(crate) fn is_loop(self) -> bool {
        matches!(
            self,
            K::ForStatement | K::ForRangeLoop | K::WhileStatement | K::DoStatement
        )
    }
}

impl Kinds {
    pub(crate) fn new(lang: &Language) -> Self {
        let n = lang.node_kind_count();
        let mut table = vec![K::Other; n + 1];
        for (id, slot) in table.iter_mut().enumerate().take(n) {
            let Some(name) = lang.node_kind_for_id(id as u16) else {
                continue;
            };
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
                "string_literal"
                | "char_literal"
                | "raw_string_literal"
                | "system_lib_string"
                | "concatenated_string" => K::StringLike,
                "preproc_call" => K::PreprocCall,
                "preproc_def" => K::PreprocDef,
                "preproc_function_def" => K::PreprocFunctionDef,
                "binary_expression" => K::BinaryExpression,
                "assignment_expression" => K::AssignmentExpression,
                "update_expression" => K::UpdateExpression,
                "pointer_expression" => K::PointerExpression,
                "compound_statement" => K::CompoundStatement,
                "template_argument_list" => K::TemplateArgumentList,
                "gnu_asm_expression" => K::GnuAsm,
                "compound_literal_expression" => K::CompoundLiteral,
                "type_definition" => K::TypeDefinition,
                "alias_declaration" => K::AliasDeclaration,
                "enum_specifier" => K::EnumSpecifier,
                "namespace_alias_definition" => K::NamespaceAlias,
                "template_instantiation" => K::TemplateInstantiation,
                "pointer_declarator"
                | "reference_declarator"
                | "function_declarator"
                | "parameter_declaration"
                | "optional_parameter_declaration"
                | "attributed_declarator"
                | "variadic_parameter_declaration" => K::HasDeclarator,
                "array_declarator" => K::ArrayDeclarator,
                "subscript_argument_list" => K::SubscriptArgumentList,
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
