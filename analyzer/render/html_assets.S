/* The HTML page's stylesheet and script, kept as files (analyzer/render/html/) so they can be read and
 * linted, linked in as NUL-terminated strings. */
    .section .rodata
    .global ga_html_css
    .type ga_html_css, @object
ga_html_css:
    .incbin "analyzer/render/html/report.css"
    .byte 0
    .global ga_html_js
    .type ga_html_js, @object
ga_html_js:
    .incbin "analyzer/render/html/report.js"
    .byte 0
    .section .note.GNU-stack, "", @progbits
