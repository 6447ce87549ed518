// The .shd language (../shared/LANGUAGE.md, sections 1-5 and 9).
//
// The grammar only recognises structure; everything with a meaning (tensor
// types, priorities, op names and their operand counts) is checked by the IR
// builder in frontend/, which reports errors at the exact token.
grammar Shd;

module : topItem* EOF ;

// Besides meshes and functions, the top level accepts the loose snippets the
// seed document is written in: a value declaration (`%arg0 : tensor<8xf32>
// {sdy.sharding=...}`), a statement, and a sharded type on its own
// (`sharding<@m, [{"x"}]> : tensor<4xf32>`).
//
// Top-level statements and declarations use their own type rules
// (topAnnotatedType): `%0 = neg %x : tensor<4xf32>` followed by a standalone
// `sharding<...> : tensor<4xf32>` is ambiguous (the sharding is taken as the
// result's), and keeping that ambiguity out of the rules used inside
// functions keeps ANTLR's error positions there exact. The printer writes
// standalone sharded types before any declaration, so its output never hits it.
topItem
  : meshDef
  | funcDef
  | valueDecl
  | topStatement
  | shardedTypeDecl
  ;

// ---- meshes (seed syntax) -------------------------------------------------
meshDef : (KW_MESH | KW_SDY_MESH)? SYMBOL '=' meshBody ;

meshBody
  : '<' meshAxes? (',' deviceIds)? (',' axisTypes)? '>'
  | '{' '<' meshAxes? '>' ',' deviceIds (',' axisTypes)? '}'
  ;

meshAxes
  : '[' (meshAxis (',' meshAxis)*)? ']'
  | meshAxis (',' meshAxis)*
  ;

meshAxis : STRING '=' INT ;

deviceIds : KW_DEVICE_IDS '=' '[' (INT (',' INT)*)? ']' ;

// `axis_types=[explicit, auto]` (LANGUAGE.md section 10): the builder keeps
// the words, the verifier checks them.
axisTypes : KW_AXIS_TYPES '=' '[' (IDENT (',' IDENT)*)? ']' ;

// ---- shardings ---------------------------------------------------------------
// `sharding<@m, [...]>` or Shardy's short `<@m, [...]>`. The optional stray
// '}' accepts the seed's own `replicated={}}>` spelling (a warning says so).
sharding
  : KW_SHARDING shardingBody
  | shardingBody
  ;

shardingBody
  : '<' SYMBOL ',' '[' (dimSharding (',' dimSharding)*)? ']'
        (',' KW_REPLICATED '=' axisSet)? stray='}'? '>'
  ;

dimSharding : '{' (dimEntry (',' dimEntry)*)? '}' priority=IDENT? ;

dimEntry
  : axisRef
  | '?'
  ;

axisRef : STRING (':' '(' pre=INT ')' size=INT)? ;

axisSet : '{' (axisRef (',' axisRef)*)? '}' ;

// ---- types -------------------------------------------------------------------
tensorType : TENSOR_TYPE ;

annotatedType
  : tensorType sharding? attrDict?
  | sharding ':' tensorType attrDict?
  ;

// The type part of a statement: result types, or MLIR's functional form
// `(operand types) -> result types`.
typeSpec
  : types+=annotatedType (',' types+=annotatedType)*
  | '(' (types+=annotatedType (',' types+=annotatedType)*)? ')' '->' res=resultTypes
  ;

resultTypes
  : types+=annotatedType
  | '(' (types+=annotatedType (',' types+=annotatedType)*)? ')'
  ;

// ---- functions and statements ---------------------------------------------------
funcDef : KW_FUNC SYMBOL '(' (param (',' param)*)? ')' ('->' resultTypes)? block ;

param : VALUE ':' annotatedType ;

block : '{' (statement | controlStmt | returnStmt)* '}' ;

valueDecl
  : VALUE ':' topAnnotatedType
  | VALUE ':' sharding
  ;

shardedTypeDecl : sharding ':' tensorType ;

// Every block item is told from the others by its first token, and an op
// from a control-flow op by the token after `=` (LL(1): ANTLR then predicts
// with a switch instead of its simulator, which a 100,000-op program asks
// once per statement).
statement : VALUE (',' VALUE)* '=' (opExpr | controlExpr) (':' typeSpec)? ;

// Control flow (LANGUAGE.md section 9). With results it is a statement; a
// loop without carried values, an `if` without results, have none.
controlStmt : controlExpr (':' typeSpec)? ;

controlExpr
  : KW_FOR VALUE '=' lb=INT KW_TO ub=INT (KW_STEP step=INT)? carryList block    # forOp
  | KW_WHILE carryList KW_COND cond=block KW_DO body=block                           # whileOp
  | KW_IF VALUE then=block (KW_ELSE otherwise=block)?                                 # ifOp
  | KW_CALL SYMBOL '(' (VALUE (',' VALUE)*)? ')'                                      # callOp
  ;

carryList : KW_CARRY '(' (carryInit (',' carryInit)*)? ')' ;

carryInit : VALUE '=' VALUE ;

topStatement : VALUE (',' VALUE)* '=' opExpr (':' topTypeSpec)? ;

topAnnotatedType
  : tensorType sharding? attrDict?
  | sharding ':' tensorType attrDict?
  ;

topTypeSpec
  : types+=topAnnotatedType (',' types+=topAnnotatedType)*
  | '(' (types+=topAnnotatedType (',' types+=topAnnotatedType)*)? ')' '->' res=topResultTypes
  ;

topResultTypes
  : types+=topAnnotatedType
  | '(' (types+=topAnnotatedType (',' types+=topAnnotatedType)*)? ')'
  ;

returnStmt : KW_RETURN (VALUE (',' VALUE)*)? (':' annotatedType (',' annotatedType)*)? ;

opExpr
  : KW_EINSUM STRING '(' (VALUE (',' VALUE)*)? ')' attrDict?                       # einsumOp
  | KW_CONSTANT denseLiteral attrDict?                                              # constantOp
  | name=(KW_SHARDING_CONSTRAINT | KW_RESHARD) VALUE sharding attrDict?             # shardingOp
  | KW_MANUAL_COMPUTATION '(' (VALUE (',' VALUE)*)? ')'
        KW_IN_SHARDINGS '=' shardingList
        KW_OUT_SHARDINGS '=' shardingList
        KW_MANUAL_AXES '=' axisSet
        '(' (param (',' param)*)? ')' block                                        # manualOp
  // auto_axes / explicit_axes (LANGUAGE.md section 10): the verifier asks for
  // the one sharding list each needs, with a note showing it.
  | name=(KW_AUTO_AXES | KW_EXPLICIT_AXES) '(' (VALUE (',' VALUE)*)? ')'
        KW_AXES '=' axisSet
        (KW_IN_SHARDINGS '=' ins=shardingList)?
        (KW_OUT_SHARDINGS '=' outs=shardingList)?
        '(' (param (',' param)*)? ')' block                                        # axesOp
  | IDENT (VALUE (',' VALUE)* attrDict? | attrDict)                                # genericOp
  ;
// An op without operands writes its attributes, even as `{}`: with the
// operand list optional, `%r = neg` followed by a top-level `%a : T` would be
// ambiguous with `%r = neg %a : T`, and ANTLR's prediction would look ahead
// to the end of the file at every statement.

shardingList : '[' (sharding (',' sharding)*)? ']' ;

denseLiteral : KW_DENSE '<' literal '>' ;

literal
  : number
  | KW_TRUE
  | KW_FALSE
  | '[' (literal (',' literal)*)? ']'
  ;

number : INT | FLOAT ;

// ---- attributes -----------------------------------------------------------------
attrDict : '{' (attribute (',' attribute)*)? '}' ;

attribute : attrName '=' attrValue ;

attrName : IDENT | keyword ;

attrValue
  : number                                       # numberAttr
  | STRING                                       # stringAttr
  | (KW_TRUE | KW_FALSE)                         # boolAttr
  | '[' (attrValue (',' attrValue)*)? ']'        # listAttr
  | axisSet                                      # axisSetAttr
  | sharding                                     # shardingAttr
  | '<' '[' (sharding (',' sharding)*)? ']' '>'  # shardingPerValueAttr
  | IDENT                                        # identAttr
  ;

keyword
  : KW_MESH | KW_SDY_MESH | KW_DEVICE_IDS | KW_AXIS_TYPES | KW_SHARDING | KW_REPLICATED | KW_FUNC
  | KW_RETURN | KW_EINSUM | KW_CONSTANT | KW_SHARDING_CONSTRAINT | KW_RESHARD
  | KW_MANUAL_COMPUTATION | KW_IN_SHARDINGS | KW_OUT_SHARDINGS | KW_MANUAL_AXES
  | KW_DENSE | KW_TRUE | KW_FALSE | KW_FOR | KW_TO | KW_STEP | KW_CARRY | KW_WHILE
  | KW_COND | KW_DO | KW_IF | KW_ELSE | KW_CALL | KW_AUTO_AXES | KW_EXPLICIT_AXES | KW_AXES
  ;

// ---- lexer ------------------------------------------------------------------------
KW_MESH : 'mesh' ;
KW_SDY_MESH : 'sdy.mesh' ;
KW_DEVICE_IDS : 'device_ids' ;
KW_AXIS_TYPES : 'axis_types' ;
KW_SHARDING : 'sharding' ;
KW_REPLICATED : 'replicated' ;
KW_FUNC : 'func' | 'func.func' ;
KW_RETURN : 'return' | 'sdy.return' ;
KW_EINSUM : 'einsum' ;
KW_CONSTANT : 'constant' ;
KW_SHARDING_CONSTRAINT : 'sharding_constraint' ;
KW_RESHARD : 'reshard' ;
KW_MANUAL_COMPUTATION : 'manual_computation' | 'sdy.manual_computation' ;
KW_IN_SHARDINGS : 'in_shardings' ;
KW_OUT_SHARDINGS : 'out_shardings' ;
KW_MANUAL_AXES : 'manual_axes' ;
KW_AUTO_AXES : 'auto_axes' ;
KW_EXPLICIT_AXES : 'explicit_axes' ;
KW_AXES : 'axes' ;
KW_DENSE : 'dense' ;
KW_TRUE : 'true' ;
KW_FOR : 'for' ;
KW_TO : 'to' ;
KW_STEP : 'step' ;
KW_CARRY : 'carry' ;
KW_WHILE : 'while' ;
KW_COND : 'cond' ;
KW_DO : 'do' ;
KW_IF : 'if' ;
KW_ELSE : 'else' ;
KW_CALL : 'call' ;
KW_FALSE : 'false' ;

// `tensor<4x8xf32>` is one token: its insides ("4x8xf32") do not split into
// ordinary tokens, so the IR builder decodes them and points into the token.
TENSOR_TYPE : 'tensor<' ~[>\r\n]* '>' ;

SYMBOL : '@' [a-zA-Z_] [a-zA-Z0-9_.$]* ;
VALUE : '%' [a-zA-Z0-9_] [a-zA-Z0-9_.$]* ;
IDENT : [a-zA-Z_] [a-zA-Z0-9_.]* ;
STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
FLOAT
  : '-'? [0-9]+ '.' [0-9]* EXPONENT?
  | '-'? [0-9]+ EXPONENT
  | '-'? '.' [0-9]+ EXPONENT?
  ;
INT : '-'? [0-9]+ ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;

ARROW : '->' ;
LT : '<' ;
GT : '>' ;
LBRACE : '{' ;
RBRACE : '}' ;
LBRACK : '[' ;
RBRACK : ']' ;
LPAREN : '(' ;
RPAREN : ')' ;
COMMA : ',' ;
COLON : ':' ;
EQUALS : '=' ;
QUESTION : '?' ;

LINE_COMMENT : '//' ~[\r\n]* -> skip ;
WS : [ \t\r\n\f]+ -> skip ;

// Anything else is one bad character, reported by the lexer's error listener
// at its exact position rather than silently dropped.
BAD_CHAR : . ;
