"""Reports: the report dict built from an analysis (build.py), with the cluster views
(views.py), rendered as Markdown, HTML or JSON (render.py) or summed up on the terminal
(terminal.py), in English or Chinese (i18n.py)."""
