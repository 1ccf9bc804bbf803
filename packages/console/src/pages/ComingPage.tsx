// A section whose page is not built yet: said plainly, with no made-up data.
export function ComingPage({ title }: { title: string }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      <p className="coming">
        Coming: this page is not built yet. Everything it will do works through the API today.
      </p>
    </section>
  );
}
