"""Import: a client's native files in, a canonical document and portable items out.

One module per client (`claude`, `copilot`, ...) reads the project's files through a
`base.Reader` (the files decoded by `files`, the document built by `base`), using the forms
clients share (`shapes`) and the body cleanup (`cleanup`); `document` lists the importers
and turns the canonical document into portable item directories. Pure: the project comes
in as a `SourceTree`.
"""
